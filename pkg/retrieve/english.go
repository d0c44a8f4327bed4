package retrieve

import (
	"unicode"
	"unicode/utf8"
)

// EnglishStopWords is Lucene's English stop-word set (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET, the
// set Anserini and Pyserini index with).
var EnglishStopWords = []string{
	"a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
	"no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
	"they", "this", "to", "was", "will", "with",
}

var englishStop = func() map[string]bool {
	m := make(map[string]bool, len(EnglishStopWords))
	for _, w := range EnglishStopWords {
		m[w] = true
	}
	return m
}()

// EnglishAnalyzer is the analysis chain of Lucene's EnglishAnalyzer over rated's tokenisation:
// the English possessive "'s" (apostrophe U+0027, U+2019 or U+FF07 followed by s or S, right
// after a letter or number and not followed by one) is dropped, the text is split and
// lower-cased by Tokenize, stop words (EnglishStopWords) are removed, and every remaining token is
// reduced by PorterStem; a token whose stem is empty (the word "s") is dropped. The Python
// equivalent the tests compare against is
//
//	text = re.sub(r"(?<=[^\W_])['’＇][sS](?![^\W_])", "", text)
//	[s for s in stemmer.stemWords([t for t in re.findall(r"[^\W_]+", text.lower()) if t not in STOP]) if s]
//
// with PyStemmer's Stemmer("porter").
func EnglishAnalyzer(dst []string, text string) []string {
	start := len(dst)
	dst = appendTokens(dst, dropPossessives(text))
	out := dst[:start]
	for _, tok := range dst[start:] {
		if englishStop[tok] {
			continue
		}
		if s := PorterStem(tok); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// dropPossessives removes each "'s" that ends a word (see EnglishAnalyzer).
func dropPossessives(text string) string {
	var out []byte
	last := 0 // text[last:i] not yet copied to out
	prevWord := false
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if prevWord && (r == '\'' || r == '\u2019' || r == '\uff07') && i+size < len(text) {
			if s := text[i+size]; s == 's' || s == 'S' {
				end := i + size + 1
				next, _ := utf8.DecodeRuneInString(text[end:])
				if end == len(text) || !isWordRune(next) {
					out = append(out, text[last:i]...)
					// The next possessive looks behind at the original text, whose last rune was s.
					last, i, prevWord = end, end, true
					continue
				}
			}
		}
		prevWord = isWordRune(r)
		i += size
	}
	if out == nil {
		return text
	}
	return string(append(out, text[last:]...))
}

// isWordRune is a letter or a number: what Tokenize keeps in a token.
func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }
