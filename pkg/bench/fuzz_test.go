package bench

import (
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
	"unicode/utf8"

	"github.com/rated-dev/rated/internal/fuzzcount"
)

// FuzzReadBEIR feeds corpus.jsonl, queries.jsonl and qrels/test.tsv (seeds: excerpts of the
// embedded default benchmark and of the Gemma-built Syn fixture, testdata/fuzz/FuzzReadBEIR).
// Any input either is an error or loads a benchmark whose ids are valid text, whose qrels name
// only known ids, and which survives a Write and a Read unchanged.
func FuzzReadBEIR(f *testing.F) {
	f.Add([]byte(`{"_id":"t1","title":"a","text":"x"}`+"\n"), []byte(`{"_id":"q1","text":"find a"}`+"\n"), []byte("q1\tt1\t1\n"))
	// Refused: misnamed fields (unknown field), empty texts.
	f.Add([]byte(`{"_id":"t1","name":"a","description":"x"}`+"\n"), []byte(`{"_id":"q1","text":"find a"}`+"\n"), []byte("q1\tt1\t1\n"))
	f.Add([]byte(`{"_id":"t1","title":"a","text":"x"}`+"\n"), []byte(`{"_id":"q1","query":"find a"}`+"\n"), []byte("q1\tt1\t1\n"))
	f.Add([]byte(`{"_id":"t1","Text":"x"}`+"\n"), []byte(`{"_id":"q1","text":"find a"}`+"\n"), []byte("q1\tt1\t1\n"))
	f.Add([]byte(`{"_id":"t1","title":" ","text":"","metadata":{}}`+"\n"), []byte(`{"_id":"q1","text":"find a"}`+"\n"), []byte("q1\tt1\t1\n"))
	f.Add([]byte(`{"_id":"t1","title":"a"}`+"\n"), []byte(`{"_id":"q1","text":null,"metadata":{"split":"test"}}`+"\n"), []byte("q1\tt1\t1\n"))
	f.Fuzz(func(t *testing.T, corpus, queries, qrels []byte) {
		fuzzcount.Tick("FuzzReadBEIR")
		b, err := Read(fstest.MapFS{"corpus.jsonl": {Data: corpus}, "queries.jsonl": {Data: queries}, "qrels/test.tsv": {Data: qrels}})
		if err != nil {
			if !strings.Contains(err.Error(), ".jsonl") && !strings.Contains(err.Error(), ".tsv") {
				t.Fatalf("error names no file: %v", err)
			}
			return
		}
		docs := map[string]bool{}
		for _, d := range b.Corpus {
			if !utf8.ValidString(d.ID) || strings.ContainsRune(d.ID, utf8.RuneError) {
				t.Fatalf("document id %q", d.ID)
			}
			docs[d.ID] = true
		}
		for qid, rel := range b.Splits["test"] {
			for did := range rel {
				if !docs[did] {
					t.Fatalf("qrels of %s name unknown document %q", qid, did)
				}
			}
		}
		dir := t.TempDir()
		if err := b.Write(dir); err != nil {
			t.Fatal(err)
		}
		again, err := ReadDir(dir)
		if err != nil {
			t.Fatalf("written benchmark does not read back: %v", err)
		}
		if !reflect.DeepEqual(normSplits(b.Splits), normSplits(again.Splits)) || len(again.Corpus) != len(b.Corpus) || len(again.Queries) != len(b.Queries) {
			t.Fatal("round trip changed the benchmark")
		}
	})
}

// normSplits drops empty maps, which do not survive a round trip and mean nothing.
func normSplits(s map[string]Qrels) map[string]Qrels {
	out := map[string]Qrels{}
	for name, q := range s {
		n := Qrels{}
		for id, rel := range q {
			if len(rel) > 0 {
				n[id] = rel
			}
		}
		out[name] = n
	}
	return out
}
