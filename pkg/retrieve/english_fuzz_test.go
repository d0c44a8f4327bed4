package retrieve

import (
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzEnglishAnalyzer checks the analyzer on arbitrary text: it never panics, every term is a
// non-empty run of lower-case letters and numbers, and the possessive pass never grows the text.
func FuzzEnglishAnalyzer(f *testing.F) {
	for _, s := range []string{"", "s", "'s", "a's's", "the user's calendar's events", "O\u2019Reilly\u2019s", "James' Slack's",
		"Ünïcödé's naïve résumés", "yyy ayyy sayyid", "\xff's", "x'\xffs", "generalizations oscillators 42nd 2000s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if len(dropPossessives(text)) > len(text) {
			t.Fatalf("dropPossessives grew %q", text)
		}
		for _, term := range EnglishAnalyzer(nil, text) {
			if term == "" || !utf8.ValidString(term) {
				t.Fatalf("term %q of %q", term, text)
			}
			for _, r := range term {
				if !isWordRune(r) || unicode.IsUpper(r) && unicode.ToLower(r) != r {
					t.Fatalf("term %q of %q has rune %q", term, text, r)
				}
			}
		}
	})
}

// FuzzPorterStem checks that stemming never panics and never lengthens a word by more than the
// one e that step 1b may add after removing a longer suffix.
func FuzzPorterStem(f *testing.F) {
	for _, s := range []string{"", "s", "y", "yy", "ies", "sses", "eed", "hopping", "generalizations", "naïve", "\xff\xfe", "aybyc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, w string) {
		if got := PorterStem(w); utf8.RuneCountInString(got) > utf8.RuneCountInString(w)+1 {
			t.Fatalf("PorterStem(%q) = %q", w, got)
		}
	})
}
