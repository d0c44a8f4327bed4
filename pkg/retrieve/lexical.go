package retrieve

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/rated-dev/rated/pkg/bench"
)

// DocText is the text every retriever indexes for a corpus entry: the title, ": ", then the
// description. When either part is empty the other is used alone, without the separator.
func DocText(d bench.Doc) string {
	switch {
	case d.Title == "":
		return d.Text
	case d.Text == "":
		return d.Title
	}
	return d.Title + ": " + d.Text
}

// Tokenize is the lexical tokenisation shared by the lexical retrievers (BM25, TF-IDF): the text
// is split into maximal runs of letters and numbers (Unicode categories L and N), every other
// character (spaces, punctuation, underscores, symbols, combining marks) separates tokens, and
// each rune is lower-cased with unicode.ToLower. Tokens keep their order and repeats.
//
// The Python equivalent used by the reference tests is
//
//	re.findall(r"[^\W_]+", text.lower())
//
// which agrees with Tokenize on every text without the few characters whose full lower-case
// mapping differs from the simple one (such as U+0130 and word-final capital sigma).
func Tokenize(text string) []string {
	return appendTokens(nil, text)
}

// appendTokens appends the tokens of text to dst (see Tokenize).
func appendTokens(dst []string, text string) []string {
	forEachToken(text, nil, func(tok []byte) { dst = append(dst, string(tok)) })
	return dst
}

// forEachToken calls fn with each token of text (see Tokenize), built in buf (reused; fn must not
// keep the slice), and returns buf for reuse.
func forEachToken(text string, buf []byte, fn func(tok []byte)) []byte {
	buf = buf[:0]
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
				buf = append(buf, c)
			case 'A' <= c && c <= 'Z':
				buf = append(buf, c+('a'-'A'))
			default:
				if len(buf) > 0 {
					fn(buf)
					buf = buf[:0]
				}
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if unicode.IsLetter(r) || unicode.IsNumber(r) {
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
		} else if len(buf) > 0 {
			fn(buf)
			buf = buf[:0]
		}
	}
	if len(buf) > 0 {
		fn(buf)
	}
	return buf
}

// searchParallel runs search for every query on GOMAXPROCS goroutines and returns the results
// in query order; the first error (by query order) wins.
func searchParallel(queries []string, k int, search func(string, int) ([]Candidate, error)) ([][]Candidate, error) {
	out := make([][]Candidate, len(queries))
	errs := make([]error, len(queries))
	workers := min(runtime.GOMAXPROCS(0), len(queries))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(queries) {
					return
				}
				out[i], errs[i] = search(queries[i], k)
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("query %d: %w", i, err)
		}
	}
	return out, nil
}
