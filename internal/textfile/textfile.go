// Package textfile reads line-oriented text inputs (JSONL, TSV) the same way everywhere: a
// leading UTF-8 byte-order mark is dropped, blank lines are skipped, and a line that is not
// valid UTF-8 is an error naming the file, the line and the byte, because decoders would
// otherwise replace the bad bytes with U+FFFD and change ids silently.
package textfile

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// MaxLine is the longest line read (a catalog record with a long description fits easily).
const MaxLine = 64 << 20

// bom is the UTF-8 encoding of U+FEFF.
var bom = []byte{0xef, 0xbb, 0xbf}

// Lines calls each with every non-blank line of r, white space trimmed, and its 1-based line
// number. Errors from each and from reading are returned as "name:line: error".
func Lines(r io.Reader, name string, each func(line int, raw []byte) error) error {
	return lines(r, name, bytes.TrimSpace, each)
}

// TabLines is Lines for tab-separated files: only spaces and carriage returns are trimmed, so a
// tab at either end stays a column separator (an empty first or last column) and a row with a
// stray trailing tab has one column too many instead of passing for a good row.
func TabLines(r io.Reader, name string, each func(line int, raw []byte) error) error {
	return lines(r, name, func(b []byte) []byte { return bytes.Trim(b, " \r") }, each)
}

func lines(r io.Reader, name string, trim func([]byte) []byte, each func(line int, raw []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), MaxLine)
	line := 0
	for sc.Scan() {
		line++
		raw := sc.Bytes()
		if line == 1 {
			raw = bytes.TrimPrefix(raw, bom)
		}
		raw = trim(raw)
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		if err := ValidUTF8(raw); err != nil {
			return fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if err := each(line, raw); err != nil {
			return fmt.Errorf("%s:%d: %w", name, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	return nil
}

// ValidUTF8 returns an error naming the first invalid byte (1-based) of b, or nil.
func ValidUTF8(b []byte) error {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return fmt.Errorf("invalid UTF-8 at byte %d (0x%02x)", i+1, b[i])
		}
		i += size
	}
	return nil
}

// CheckID refuses an identifier that cannot name one thing unambiguously: empty, or holding
// U+FFFD, which JSON decoding substitutes for a lone surrogate escape (\udc80), so two different
// ids in the file would become the same one. field names the key in the error.
func CheckID(field, id string) error {
	switch {
	case strings.TrimSpace(id) == "":
		return fmt.Errorf("%s is empty", field)
	case strings.ContainsRune(id, utf8.RuneError):
		return fmt.Errorf("%s %q holds U+FFFD: an invalid escape (a lone surrogate such as \\udc80) or a replacement character; ids must be valid text", field, id)
	}
	return nil
}
