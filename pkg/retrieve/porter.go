package retrieve

// PorterStem returns the stem of a lower-case word under the Porter (1980) stemming algorithm, as
// the Snowball project defines it ("porter", the stemmer of Lucene's PorterStemFilter and of
// PyStemmer's Stemmer("porter"), which the tests compare against): step 1a (plurals), 1b (-ed,
// -ing), 1c (y to i), 2 and 3 (double and single suffixes in R1), 4 (suffixes in R2) and 5
// (final e and ll). The word is handled as runes; only a–z and y take part in the vowel tests, so
// digits and other letters count as consonants and pass through unchanged.
func PorterStem(word string) string {
	w := []rune(word)
	if len(w) == 0 {
		return word
	}
	// No minimum length, as in Snowball: "as" stems to "a" and "s" to "".
	s := porterWord{w: w}
	s.markY()
	s.p1, s.p2 = s.regions()
	s.step1a()
	s.step1b()
	s.step1c()
	s.step2()
	s.step3()
	s.step4()
	s.step5a()
	s.step5b()
	for i, r := range s.w {
		if r == 'Y' {
			s.w[i] = 'y'
		}
	}
	return string(s.w)
}

// porterWord is a word being stemmed: its runes (a consonant y is written Y) and the starts of
// the regions R1 and R2.
type porterWord struct {
	w      []rune
	p1, p2 int
}

// isVowel is Snowball's vowel grouping for Porter: a, e, i, o, u and a lower-case y (a y that
// acts as a consonant was upper-cased by markY).
func isVowel(r rune) bool {
	switch r {
	case 'a', 'e', 'i', 'o', 'u', 'y':
		return true
	}
	return false
}

// markY upper-cases a y that is a consonant: at the start of the word or after a vowel.
func (s *porterWord) markY() {
	if s.w[0] == 'y' {
		s.w[0] = 'Y'
	}
	for i := 1; i < len(s.w); i++ {
		if s.w[i] == 'y' && isVowel(s.w[i-1]) {
			s.w[i] = 'Y'
		}
	}
}

// regions returns the starts of R1 (after the first non-vowel that follows a vowel) and R2 (the
// same rule applied again inside R1); len(w) when there is none.
func (s *porterWord) regions() (int, int) {
	next := func(from int) int {
		for i := from; i+1 < len(s.w); i++ {
			if isVowel(s.w[i]) && !isVowel(s.w[i+1]) {
				return i + 2
			}
		}
		return len(s.w)
	}
	p1 := next(0)
	return p1, next(p1)
}

func (s *porterWord) hasSuffix(suf string) bool {
	n := len(suf)
	if n > len(s.w) {
		return false
	}
	for i := range n {
		if s.w[len(s.w)-n+i] != rune(suf[i]) {
			return false
		}
	}
	return true
}

// longest returns the longest of sufs that the word ends with, or "".
func (s *porterWord) longest(sufs []string) string {
	best := ""
	for _, suf := range sufs {
		if len(suf) > len(best) && s.hasSuffix(suf) {
			best = suf
		}
	}
	return best
}

// replace swaps the last n runes for with.
func (s *porterWord) replace(n int, with string) {
	s.w = append(s.w[:len(s.w)-n], []rune(with)...)
}

// vowelBefore reports whether a vowel occurs before position end.
func (s *porterWord) vowelBefore(end int) bool {
	for _, r := range s.w[:end] {
		if isVowel(r) {
			return true
		}
	}
	return false
}

// shortSyllableAt reports whether the word up to end ends in consonant, vowel, consonant where
// the last consonant is not w, x or Y (Porter's *o).
func (s *porterWord) shortSyllableAt(end int) bool {
	if end < 3 {
		return false
	}
	c1, v, c2 := s.w[end-3], s.w[end-2], s.w[end-1]
	return !isVowel(c1) && isVowel(v) && !isVowel(c2) && c2 != 'w' && c2 != 'x' && c2 != 'Y'
}

func (s *porterWord) step1a() {
	switch s.longest([]string{"sses", "ies", "ss", "s"}) {
	case "sses":
		s.replace(4, "ss")
	case "ies":
		s.replace(3, "i")
	case "s":
		s.replace(1, "")
	}
}

func (s *porterWord) step1b() {
	suf := s.longest([]string{"eed", "ed", "ing"})
	switch suf {
	case "":
		return
	case "eed":
		if len(s.w)-3 >= s.p1 {
			s.replace(3, "ee")
		}
		return
	}
	start := len(s.w) - len(suf)
	if !s.vowelBefore(start) {
		return
	}
	s.replace(len(suf), "")
	switch end := s.longest([]string{"at", "bl", "iz", "bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt"}); end {
	case "at", "bl", "iz":
		s.w = append(s.w, 'e')
	case "":
		if len(s.w) == s.p1 && s.shortSyllableAt(len(s.w)) {
			s.w = append(s.w, 'e')
		}
	default: // a double consonant
		s.w = s.w[:len(s.w)-1]
	}
}

func (s *porterWord) step1c() {
	n := len(s.w)
	if n > 0 && (s.w[n-1] == 'y' || s.w[n-1] == 'Y') && s.vowelBefore(n-1) {
		s.w[n-1] = 'i'
	}
}

// step2Rules and step3Rules map each suffix to its replacement in R1.
var step2Rules = map[string]string{
	"tional": "tion", "enci": "ence", "anci": "ance", "abli": "able", "entli": "ent", "eli": "e",
	"izer": "ize", "ization": "ize", "ational": "ate", "ation": "ate", "ator": "ate", "alli": "al",
	"alism": "al", "aliti": "al", "fulness": "ful", "ousli": "ous", "ousness": "ous",
	"iveness": "ive", "iviti": "ive", "biliti": "ble",
}

var step3Rules = map[string]string{
	"icate": "ic", "ative": "", "alize": "al", "iciti": "ic", "ical": "ic", "ful": "", "ness": "",
}

var step2Suffixes, step3Suffixes = keys(step2Rules), keys(step3Rules)

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// replaceInR1 replaces the longest suffix of rules when it lies in R1 (a shorter one is not
// tried when the longest does not).
func (s *porterWord) replaceInR1(sufs []string, rules map[string]string) {
	if suf := s.longest(sufs); suf != "" && len(s.w)-len(suf) >= s.p1 {
		s.replace(len(suf), rules[suf])
	}
}

func (s *porterWord) step2() { s.replaceInR1(step2Suffixes, step2Rules) }
func (s *porterWord) step3() { s.replaceInR1(step3Suffixes, step3Rules) }

var step4Suffixes = []string{"al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment",
	"ent", "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize"}

func (s *porterWord) step4() {
	suf := s.longest(step4Suffixes)
	start := len(s.w) - len(suf)
	if suf == "" || start < s.p2 {
		return
	}
	if suf == "ion" && (start == 0 || s.w[start-1] != 's' && s.w[start-1] != 't') {
		return
	}
	s.replace(len(suf), "")
}

func (s *porterWord) step5a() {
	n := len(s.w)
	if n == 0 || s.w[n-1] != 'e' {
		return
	}
	if n-1 >= s.p2 || n-1 >= s.p1 && !s.shortSyllableAt(n-1) {
		s.w = s.w[:n-1]
	}
}

func (s *porterWord) step5b() {
	n := len(s.w)
	if n >= 2 && s.w[n-1] == 'l' && s.w[n-2] == 'l' && n-1 >= s.p2 {
		s.w = s.w[:n-1]
	}
}
