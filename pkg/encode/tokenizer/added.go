package tokenizer

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// addedToken is an entry of tokenizer.json's added_tokens ([CLS], [SEP], [MASK] …), matched in
// the text before the model runs.
type addedToken struct {
	content    string
	id         int32
	singleWord bool // only match when not inside a word
	lstrip     bool // swallow white space on the left
	rstrip     bool // swallow white space on the right
}

// addedMatcher finds added tokens in a text, leftmost-longest first (as the reference's
// Aho-Corasick automaton with MatchKind::LeftmostLongest does).
type addedMatcher struct {
	tokens    []addedToken // longest first
	firstByte [256]bool
}

// segment is a byte range of a text: an added token (id ≥ 0) or text for the model (id = -1).
type segment struct {
	start, end int
	id         int32
}

func newAddedMatcher(tokens []addedToken) addedMatcher {
	var m addedMatcher
	for _, tok := range tokens {
		if tok.content == "" {
			continue
		}
		m.tokens = append(m.tokens, tok)
		m.firstByte[tok.content[0]] = true
	}
	// Longest first, so the first token that matches at a position is the longest one.
	for i := 1; i < len(m.tokens); i++ {
		for j := i; j > 0 && len(m.tokens[j-1].content) < len(m.tokens[j].content); j-- {
			m.tokens[j-1], m.tokens[j] = m.tokens[j], m.tokens[j-1]
		}
	}
	return m
}

// match returns the leftmost-longest token match at or after from.
func (m *addedMatcher) match(s string, from int) (start int, tok *addedToken) {
	for i := from; i < len(s); i++ {
		if !m.firstByte[s[i]] {
			continue
		}
		for k := range m.tokens {
			if strings.HasPrefix(s[i:], m.tokens[k].content) {
				return i, &m.tokens[k]
			}
		}
	}
	return -1, nil
}

// split appends the segments of s to segs: the reference's AddedVocabulary::find_matches,
// single_word, lstrip and rstrip included. Empty text segments are left out.
func (m *addedMatcher) split(segs []segment, s string) []segment {
	if len(m.tokens) == 0 {
		if len(s) > 0 {
			segs = append(segs, segment{0, len(s), -1})
		}
		return segs
	}
	done := 0   // end of the last segment emitted
	search := 0 // where the automaton resumes: the end of the last raw match
	for search < len(s) {
		start, tok := m.match(s, search)
		if tok == nil {
			break
		}
		stop := start + len(tok.content)
		search = stop
		if tok.singleWord {
			startSpace := start == 0 || !endsWithWord(s[:start])
			stopSpace := stop == len(s) || !startsWithWord(s[stop:])
			if !startSpace || !stopSpace {
				continue
			}
		}
		if tok.lstrip {
			newStart := start
			for newStart > 0 {
				r, size := utf8.DecodeLastRuneInString(s[:newStart])
				if !unicode.IsSpace(r) {
					break
				}
				newStart -= size
			}
			start = max(newStart, done)
		}
		if tok.rstrip {
			for stop < len(s) {
				r, size := utf8.DecodeRuneInString(s[stop:])
				if !unicode.IsSpace(r) {
					break
				}
				stop += size
			}
		}
		if done < start {
			segs = append(segs, segment{done, start, -1})
		}
		segs = append(segs, segment{start, stop, tok.id})
		done = stop
	}
	if done < len(s) {
		segs = append(segs, segment{done, len(s), -1})
	}
	return segs
}

// isWordChar is the regex class \w: alphabetic, mark, decimal digit, connector punctuation,
// join control.
func isWordChar(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsDigit(r) ||
		unicode.Is(unicode.Pc, r) || unicode.Is(unicode.Join_Control, r) ||
		unicode.Is(unicode.Other_Alphabetic, r) || unicode.Is(unicode.Nl, r)
}

func endsWithWord(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return s != "" && isWordChar(r)
}

func startsWithWord(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return s != "" && isWordChar(r)
}
