package crawl

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// pyTokKind is the kind of a Python token.
type pyTokKind int

const (
	tokName pyTokKind = iota
	tokString
	tokNumber
	tokOp
	tokNewline
	tokIndent
	tokDedent
	tokEOF
)

// pyTok is one token of the Python subset the crawler reads.
type pyTok struct {
	Kind pyTokKind
	Text string // identifier, operator, number text; decoded value for strings
	Line int
	// For strings: FString is set for f-strings; Runtime is set when an f-string has
	// placeholders, so its value is only known at run time.
	FString bool
	Runtime bool
}

// pySyntaxError is a lexing or parsing error with the line it happened on.
type pySyntaxError struct {
	Line int
	Msg  string
}

// Error implements error.
func (e *pySyntaxError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// lexPython tokenises Python source into names, strings, numbers, operators and the
// NEWLINE/INDENT/DEDENT structure. It follows the language's rules for implicit line joining
// inside brackets, backslash continuation, comments and string prefixes.
func lexPython(src []byte) ([]pyTok, error) {
	s := string(src)
	s = strings.TrimPrefix(s, "\ufeff")
	var toks []pyTok
	indents := []int{0}
	line := 1
	depth := 0
	i := 0
	atLineStart := true
	for i < len(s) {
		if atLineStart && depth == 0 {
			// Measure indentation; blank and comment-only lines do not count.
			col := 0
			j := i
			for j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '\f') {
				if s[j] == '\t' {
					col = (col/8 + 1) * 8
				} else if s[j] == ' ' {
					col++
				}
				j++
			}
			if j >= len(s) {
				i = j
				break
			}
			if s[j] == '\n' || s[j] == '\r' || s[j] == '#' || (s[j] == '\\' && j+1 < len(s) && s[j+1] == '\n') {
				// Skip to end of line.
				for j < len(s) && s[j] != '\n' {
					j++
				}
				if j < len(s) {
					j++
					line++
				}
				i = j
				continue
			}
			i = j
			atLineStart = false
			if col > indents[len(indents)-1] {
				indents = append(indents, col)
				toks = append(toks, pyTok{Kind: tokIndent, Line: line})
			} else {
				for col < indents[len(indents)-1] {
					indents = indents[:len(indents)-1]
					toks = append(toks, pyTok{Kind: tokDedent, Line: line})
				}
				if col != indents[len(indents)-1] {
					return nil, &pySyntaxError{line, "unindent does not match any outer indentation level"}
				}
			}
		}
		c := s[i]
		switch {
		case c == '\n':
			if depth == 0 {
				toks = append(toks, pyTok{Kind: tokNewline, Line: line})
				atLineStart = true
			}
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			i++
		case c == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '\\':
			if i+1 < len(s) && s[i+1] == '\n' {
				i += 2
				line++
			} else if i+2 < len(s) && s[i+1] == '\r' && s[i+2] == '\n' {
				i += 3
				line++
			} else {
				return nil, &pySyntaxError{line, "unexpected character after line continuation"}
			}
		case isIdentStart(s, i):
			j := i
			for j < len(s) {
				r, size := utf8.DecodeRuneInString(s[j:])
				if r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) {
					j += size
					continue
				}
				break
			}
			word := s[i:j]
			if j < len(s) && (s[j] == '"' || s[j] == '\'') && isStringPrefix(word) {
				tok, n, nl, err := lexString(s, j, strings.ToLower(word), line)
				if err != nil {
					return nil, err
				}
				toks = append(toks, tok)
				line += nl
				i = n
				continue
			}
			toks = append(toks, pyTok{Kind: tokName, Text: word, Line: line})
			i = j
		case c == '"' || c == '\'':
			tok, n, nl, err := lexString(s, i, "", line)
			if err != nil {
				return nil, err
			}
			toks = append(toks, tok)
			line += nl
			i = n
		case c >= '0' && c <= '9' || (c == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9'):
			j := i
			for j < len(s) && (isAlnum(s[j]) || s[j] == '.' || s[j] == '_' ||
				((s[j] == '+' || s[j] == '-') && (s[j-1] == 'e' || s[j-1] == 'E') && !strings.HasPrefix(s[i:], "0x"))) {
				j++
			}
			toks = append(toks, pyTok{Kind: tokNumber, Text: s[i:j], Line: line})
			i = j
		default:
			op := lexOp(s, i)
			switch op {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				if depth > 0 {
					depth--
				} else {
					return nil, &pySyntaxError{line, fmt.Sprintf("unmatched %q", op)}
				}
			case "":
				r, _ := utf8.DecodeRuneInString(s[i:])
				return nil, &pySyntaxError{line, fmt.Sprintf("invalid character %q", r)}
			}
			toks = append(toks, pyTok{Kind: tokOp, Text: op, Line: line})
			i += len(op)
		}
	}
	if depth > 0 {
		return nil, &pySyntaxError{line, "unexpected end of file inside brackets"}
	}
	if len(toks) > 0 && toks[len(toks)-1].Kind != tokNewline && toks[len(toks)-1].Kind != tokDedent {
		toks = append(toks, pyTok{Kind: tokNewline, Line: line})
	}
	for len(indents) > 1 {
		indents = indents[:len(indents)-1]
		toks = append(toks, pyTok{Kind: tokDedent, Line: line})
	}
	toks = append(toks, pyTok{Kind: tokEOF, Line: line})
	return toks, nil
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isIdentStart(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return r == '_' || unicode.IsLetter(r)
}

func isStringPrefix(w string) bool {
	switch strings.ToLower(w) {
	case "r", "u", "b", "f", "br", "rb", "fr", "rf", "t", "tr", "rt":
		return true
	}
	return false
}

var pyOps = []string{"**=", "//=", ">>=", "<<=", "...", "->", ":=", "**", "//", "<<", ">>", "<=", ">=", "==", "!=",
	"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=",
	"(", ")", "[", "]", "{", "}", ",", ":", ".", ";", "@", "=", "+", "-", "*", "/", "%", "&", "|", "^", "~", "<", ">", "!"}

func lexOp(s string, i int) string {
	for _, op := range pyOps {
		if strings.HasPrefix(s[i:], op) {
			return op
		}
	}
	return ""
}

// lexString reads a string literal starting at s[i] (the opening quote) with the given lower-case
// prefix. It returns the token, the index after the literal and the number of newlines inside.
func lexString(s string, i int, prefix string, line int) (pyTok, int, int, error) {
	q := s[i]
	triple := strings.HasPrefix(s[i:], strings.Repeat(string(q), 3))
	delim := string(q)
	if triple {
		delim = strings.Repeat(string(q), 3)
	}
	j := i + len(delim)
	start := j
	nl := 0
	for {
		if j >= len(s) {
			return pyTok{}, 0, 0, &pySyntaxError{line, "unterminated string literal"}
		}
		c := s[j]
		if c == '\\' && j+1 < len(s) {
			if s[j+1] == '\n' {
				nl++
			}
			j += 2
			continue
		}
		if c == '\n' {
			if !triple {
				return pyTok{}, 0, 0, &pySyntaxError{line, "unterminated string literal"}
			}
			nl++
		}
		if strings.HasPrefix(s[j:], delim) {
			break
		}
		j++
	}
	body := s[start:j]
	raw := strings.Contains(prefix, "r")
	tok := pyTok{Kind: tokString, Line: line}
	val := body
	if !raw {
		val = unescapePy(body)
	}
	if strings.Contains(prefix, "f") || strings.Contains(prefix, "t") {
		tok.FString = true
		val, tok.Runtime = fstringLiteral(val)
	}
	tok.Text = val
	return tok, j + len(delim), nl, nil
}

// fstringLiteral turns an f-string body into its literal text: "{{" and "}}" become braces, and
// runtime reports whether any replacement field ({expr}) remains.
func fstringLiteral(body string) (string, bool) {
	var b strings.Builder
	runtime := false
	for i := 0; i < len(body); i++ {
		c := body[i]
		if (c == '{' || c == '}') && i+1 < len(body) && body[i+1] == c {
			b.WriteByte(c)
			i++
			continue
		}
		if c == '{' {
			runtime = true
		}
		b.WriteByte(c)
	}
	return b.String(), runtime
}

// unescapePy decodes the backslash escapes of a non-raw Python string literal. Unknown escapes
// are kept verbatim, as Python does.
func unescapePy(body string) string {
	if !strings.Contains(body, "\\") {
		return body
	}
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' || i+1 >= len(body) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := body[i]; e {
		case '\n':
		case '\\', '\'', '"':
			b.WriteByte(e)
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if i+n < len(body) {
				if v, err := strconv.ParseUint(body[i+1:i+1+n], 16, 32); err == nil {
					b.WriteRune(rune(v))
					i += n
					continue
				}
			}
			b.WriteByte('\\')
			b.WriteByte(e)
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String()
}
