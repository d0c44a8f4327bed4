package synth

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

var (
	// A list item: "1.", "1)", "(1)", "Q1:", "Query 1:", "-", "*", "•", "+", followed by text.
	listItemRE = regexp.MustCompile(`^\s*(?:\(?\d{1,3}[.):]|(?i:q|query)\s*\d{1,3}\s*[.:)-]|[-*•+])\s+(.*\S)\s*$`)
	// Markdown emphasis and code marks around a whole item.
	emphasisRE = regexp.MustCompile("^(?:\\*\\*|__|`)(.*)(?:\\*\\*|__|`)$")
)

// ParseQueries extracts the queries from an LLM answer. It accepts, in this order of preference:
// a JSON array of strings (or of objects with a "query" field), anywhere in the text, possibly
// inside a Markdown code fence; a numbered or bulleted list, ignoring the prose around it; and,
// when neither is present, one query per non-empty line that does not look like prose about the
// list (a line ending in ':' or opening with "Here are", "Sure", "Sorry", ...; list items that
// look like that are dropped too). Each query is trimmed of
// quotes, emphasis marks and a leading label such as "Query:". Empty results are dropped; order
// is kept.
func ParseQueries(text string) []string {
	if qs, ok := parseJSONList(text); ok {
		return cleanAll(qs)
	}
	var items, plain []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "```") {
			continue
		}
		if m := listItemRE.FindStringSubmatch(line); m != nil {
			if !isProse(cleanQuery(m[1])) {
				items = append(items, m[1])
			}
			continue
		}
		if !isProse(line) {
			plain = append(plain, line)
		}
	}
	if len(items) > 0 {
		return cleanAll(items)
	}
	return cleanAll(plain)
}

func parseJSONList(text string) ([]string, bool) {
	start := strings.IndexByte(text, '[')
	for start >= 0 {
		end := strings.LastIndexByte(text, ']')
		for end > start {
			var raw []json.RawMessage
			if err := json.Unmarshal([]byte(text[start:end+1]), &raw); err == nil {
				var out []string
				for _, r := range raw {
					var s string
					if json.Unmarshal(r, &s) == nil {
						out = append(out, s)
						continue
					}
					var obj map[string]any
					if json.Unmarshal(r, &obj) == nil {
						for _, k := range []string{"query", "text", "question"} {
							if v, ok := obj[k].(string); ok {
								out = append(out, v)
								break
							}
						}
					}
				}
				if len(out) > 0 {
					return out, true
				}
				break
			}
			end = strings.LastIndexByte(text[:end], ']')
		}
		next := strings.IndexByte(text[start+1:], '[')
		if next < 0 {
			break
		}
		start += 1 + next
	}
	return nil, false
}

var prosePrefixes = []string{
	"here are", "here is", "here's", "sure", "okay", "ok,", "certainly", "of course", "these queries",
	"i hope", "let me know", "note:", "note that", "queries:", "user queries", "as an ai",
	"sorry", "i cannot", "i can't", "i'm sorry", "i am sorry",
}

func isProse(line string) bool {
	l := strings.ToLower(line)
	if strings.HasSuffix(l, ":") {
		return true
	}
	for _, p := range prosePrefixes {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return strings.HasPrefix(l, "#")
}

func cleanAll(in []string) []string {
	var out []string
	for _, s := range in {
		if c := cleanQuery(s); c != "" {
			out = append(out, c)
		}
	}
	return out
}

var labelRE = regexp.MustCompile(`(?i)^(?:user\s+)?(?:query|question|request)\s*\d*\s*[:-]\s*`)

func cleanQuery(s string) string {
	s = strings.TrimSpace(s)
	for i := 0; i < 3; i++ {
		prev := s
		if m := emphasisRE.FindStringSubmatch(s); m != nil {
			s = strings.TrimSpace(m[1])
		}
		s = labelRE.ReplaceAllString(s, "")
		s = strings.TrimSpace(strings.Trim(s, "\"'“”‘’"))
		if s == prev {
			break
		}
	}
	return strings.Join(strings.Fields(s), " ")
}

// ParseScore extracts a functional-match score in [0, 1] from a validator answer. It accepts a
// JSON object with a "score" field (anywhere in the text), "score: 0.9" / "Score = 0.9", a
// fraction "9/10", a percentage "90%", or a lone number. Integers in (1, 10] without a unit are
// read as a rating out of 10 and integers in (10, 100] as a percentage; anything else out of
// [0, 1] (such as 1.5) is an
// error, as is an answer with no number.
func ParseScore(text string) (float64, error) {
	t := strings.TrimSpace(text)
	if i := strings.IndexByte(t, '{'); i >= 0 {
		if j := strings.LastIndexByte(t, '}'); j > i {
			var obj map[string]any
			if json.Unmarshal([]byte(t[i:j+1]), &obj) == nil {
				for k, v := range obj {
					if strings.EqualFold(k, "score") {
						switch x := v.(type) {
						case float64:
							return normaliseScore(x)
						case string:
							return ParseScore(x)
						}
					}
				}
			}
		}
	}
	if m := labelledScoreRE.FindStringSubmatch(t); m != nil {
		return scoreFromMatch(m[1], m[2], m[3], m[4])
	}
	if m := anyScoreRE.FindStringSubmatch(t); m != nil {
		return scoreFromMatch(m[1], m[2], m[3], m[4])
	}
	return 0, fmt.Errorf("no score in %q", snippet([]byte(t)))
}

var (
	labelledScoreRE = regexp.MustCompile(`(?i)score\W{0,4}?\s*[:=]?\s*\**\s*(-?(?:\d+(?:\.\d+)?|\.\d+))\s*(?:(/)\s*(\d+(?:\.\d+)?)|(%))?`)
	anyScoreRE      = regexp.MustCompile(`(-?(?:\d+(?:\.\d+)?|\.\d+))\s*(?:(/)\s*(\d+(?:\.\d+)?)|(%))?`)
)

func scoreFromMatch(num, slash, den, pct string) (float64, error) {
	x, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, err
	}
	if x < 0 {
		// "-1%" or "-1/10" would pass the range checks below as -0.01 and -0.1.
		return 0, fmt.Errorf("negative score %s", num)
	}
	if pct == "%" {
		if x > 100 {
			return 0, fmt.Errorf("score %s%% above 100%%", num)
		}
		return x / 100, nil
	}
	if slash == "/" {
		d, err := strconv.ParseFloat(den, 64)
		if err != nil || d <= 0 {
			return 0, fmt.Errorf("bad denominator %q", den)
		}
		if x > d {
			return 0, fmt.Errorf("score %s/%s above 1", num, den)
		}
		return x / d, nil
	}
	return normaliseScore(x)
}

func normaliseScore(x float64) (float64, error) {
	switch {
	case x < 0:
		return 0, fmt.Errorf("negative score %g", x)
	case x <= 1:
		return x, nil
	case x == math.Trunc(x) && x <= 10:
		return x / 10, nil // an integer 0-10 rating
	case x == math.Trunc(x) && x <= 100:
		return x / 100, nil // an integer percentage without the sign
	}
	return 0, fmt.Errorf("score %g is outside [0, 1] and not an integer rating out of 10 or 100", x)
}

// errNoQueries is the format error of an answer without a usable query.
var errNoQueries = errors.New("no usable query in the answer (none parsed, of the allowed length and not copied from the prompt's example)")

// wordTokens splits text into lower-case words: maximal runs of Unicode letters and digits. This
// is the tokenisation of the near-duplicate filter (Jaccard over word sets).
func wordTokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}
