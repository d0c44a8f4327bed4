package synth

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rated-dev/rated/internal/fuzzcount"
)

// FuzzParseQueries feeds model answers (seeds: numbered lists built from the queries Gemma 3
// 270M wrote for the Syn fixture, testdata/fuzz/FuzzParseQueries): every query returned is a
// trimmed, non-empty single line.
func FuzzParseQueries(f *testing.F) {
	f.Add("1. find me a flight to Paris\n2. book a table for two\n")
	f.Add(`["a json list of queries", "second one"]`)
	f.Fuzz(func(t *testing.T, text string) {
		fuzzcount.Tick("FuzzParseQueries")
		for _, q := range ParseQueries(text) {
			if q == "" || q != strings.TrimSpace(q) || strings.ContainsAny(q, "\n\r") {
				t.Fatalf("query %q from %q", q, text)
			}
		}
	})
}

// FuzzParseScore feeds validator answers (seeds: the answer shapes seen from the validator,
// testdata/fuzz/FuzzParseScore): a score is a finite number in [0, 1], or an error.
func FuzzParseScore(f *testing.F) {
	f.Fuzz(func(t *testing.T, text string) {
		fuzzcount.Tick("FuzzParseScore")
		s, err := ParseScore(text)
		if err == nil && !(s >= 0 && s <= 1) {
			t.Fatalf("score %v from %q", s, text)
		}
	})
}

// FuzzOpenJournal feeds a journal file (seeds: records of the Syn fixture's queries, whole and
// with a torn last line, testdata/fuzz/FuzzOpenJournal). Any input is an error naming the file,
// or records with keys; the file is cut to its last complete record, so reopening gives the same
// records, and an appended record reads back.
func FuzzOpenJournal(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzcount.Tick("FuzzOpenJournal")
		path := filepath.Join(t.TempDir(), "syn.jsonl")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		j, err := OpenJournal(path)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error names no file: %v", err)
			}
			return
		}
		n := len(j.Records())
		for _, r := range j.Records() {
			if r.Key == "" {
				t.Fatal("record without key")
			}
		}
		if err := j.Append(Record{Key: "fuzz/new", OK: true}); err != nil {
			t.Fatal(err)
		}
		j.Close()
		again, err := OpenJournal(path)
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		defer again.Close()
		if got := len(again.Records()); got != n+1 && !(got == n && again.Done("fuzz/new")) {
			t.Fatalf("reopened journal has %d records, want %d", got, n+1)
		}
		if !again.Done("fuzz/new") {
			t.Fatal("appended record lost")
		}
	})
}

// FuzzReadAuditAgreement feeds a labelled audit CSV (seed: a row of a ToolBench query and a
// Syn fixture tool, testdata/fuzz/FuzzReadAuditAgreement): any input is an error naming the file,
// or counts that add up, an agreement rate in [0, 1] and a finite kappa.
func FuzzReadAuditAgreement(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzcount.Tick("FuzzReadAuditAgreement")
		path := filepath.Join(t.TempDir(), "audit.csv")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		a, err := ReadAuditAgreement(path)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error names no file: %v", err)
			}
			return
		}
		if a.KeepYes+a.KeepNo+a.DropYes+a.DropNo != a.Labelled || a.Agree > a.Labelled {
			t.Fatalf("counts %+v", a)
		}
		if a.Labelled > 0 && !(a.Rate >= 0 && a.Rate <= 1) {
			t.Fatalf("rate %v", a.Rate)
		}
		if a.Kappa != nil && (math.IsNaN(*a.Kappa) || math.IsInf(*a.Kappa, 0)) {
			t.Fatalf("kappa %v", *a.Kappa)
		}
	})
}

// FuzzParseRealQueries feeds ToolBench queries (seed: the first lines of
// data/toolbench/queries.jsonl, testdata/fuzz/FuzzParseRealQueries): any input is an error
// naming the line, or queries with distinct, non-empty ids and text.
func FuzzParseRealQueries(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzcount.Tick("FuzzParseRealQueries")
		qs, err := ParseRealQueries("q.jsonl", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "q.jsonl") {
				t.Fatalf("error names no file: %v", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, q := range qs {
			if q.ID == "" || strings.TrimSpace(q.Text) == "" || seen[q.ID] {
				t.Fatalf("query %+v (duplicate %v)", q, seen[q.ID])
			}
			seen[q.ID] = true
		}
	})
}

// FuzzLoadLLMConfig feeds llm.yaml (seed: configs/llm.yaml, testdata/fuzz/FuzzLoadLLMConfig):
// any input is an error naming the file, or a configuration whose client settings are usable.
func FuzzLoadLLMConfig(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzcount.Tick("FuzzLoadLLMConfig")
		path := filepath.Join(t.TempDir(), "llm.yaml")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := LoadLLMConfig(path, func(string) string { return "" })
		if err != nil {
			if !strings.Contains(err.Error(), path) && !strings.Contains(err.Error(), "llm config") {
				t.Fatalf("error names no file: %v", err)
			}
			return
		}
		if math.IsNaN(c.Temperature) || math.IsInf(c.Temperature, 0) || c.Temperature < 0 {
			t.Fatalf("temperature %v", c.Temperature)
		}
		if c.TimeoutS < 0 || math.IsNaN(c.TimeoutS) || c.Retries < 0 || c.Concurrency < 0 || c.MaxTokens < 0 {
			t.Fatalf("client settings %+v", c)
		}
	})
}

// TestNegativeScoresAreRefused (found by FuzzParseScore, crasher ecd9b3de1c8b0ca5): "-1%" was
// read as the score -0.01, and "-1/10" as -0.1.
func TestNegativeScoresAreRefused(t *testing.T) {
	for _, s := range []string{"-1%", "Score: -1/10", "-0.5", `{"score": -2}`} {
		if v, err := ParseScore(s); err == nil {
			t.Errorf("ParseScore(%q) = %v, want an error", s, v)
		}
	}
	for s, want := range map[string]float64{"90%": 0.9, "9/10": 0.9, "Score: 0.85": 0.85, "7": 0.7} {
		if v, err := ParseScore(s); err != nil || math.Abs(v-want) > 1e-12 {
			t.Errorf("ParseScore(%q) = %v, %v; want %v", s, v, err, want)
		}
	}
}

// FuzzRealTag: a journal key's settings tag holds neither separator, and only Real keys have one.
func FuzzRealTag(f *testing.F) {
	for _, s := range []string{"real/q/t", "real@abc.def/q/t", "real@abc/q/t", "syn@x/n10/t", "real@", "real@./"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		tag, ok := RealTag(key)
		if !ok && tag != "" {
			t.Fatalf("%q: not a Real key but tag %q", key, tag)
		}
		if ok && (!strings.HasPrefix(key, "real") || strings.ContainsAny(tag, "/.")) {
			t.Fatalf("%q: tag %q", key, tag)
		}
	})
}
