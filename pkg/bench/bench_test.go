package bench

import (
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

func goodFS() fstest.MapFS {
	return fstest.MapFS{
		"corpus.jsonl":   {Data: []byte(`{"_id":"t1","title":"a","text":"x"}` + "\n" + `{"_id":"t2","title":"b","text":"y"}` + "\n")},
		"queries.jsonl":  {Data: []byte(`{"_id":"q1","text":"find a"}` + "\n" + `{"_id":"q2","text":"find b"}` + "\n" + `{"_id":"q3","text":"orphan"}` + "\n")},
		"qrels/test.tsv": {Data: []byte("query-id\tcorpus-id\tscore\nq1\tt1\t1\nq2\tt2\t1\nq2\tt1\t0\n")},
	}
}

func TestReadAndRoundTrip(t *testing.T) {
	b, err := Read(goodFS())
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Relevant("test", "q2"); !reflect.DeepEqual(got, []string{"t2"}) {
		t.Fatalf("Relevant(q2) = %v", got)
	}
	if n := len(b.SplitQueries("test")); n != 2 {
		t.Fatalf("SplitQueries = %d, want 2", n)
	}
	if len(b.Warnings) != 1 || !strings.Contains(b.Warnings[0], "1 queries") {
		t.Fatalf("warnings = %v", b.Warnings)
	}
	dir := t.TempDir()
	if err := b.Write(dir); err != nil {
		t.Fatal(err)
	}
	b2, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(b.Splits, b2.Splits) || !reflect.DeepEqual(b.Corpus, b2.Corpus) {
		t.Fatal("round trip changed the benchmark")
	}
}

func TestReadErrorsNameFileAndLine(t *testing.T) {
	cases := []struct {
		file, body, want string
	}{
		{"corpus.jsonl", `{"_id":"t1"}` + "\n{oops\n", "corpus.jsonl:2:"},
		{"queries.jsonl", `{"text":"no id"}` + "\n", "queries.jsonl:1:"},
		{"qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\tmissing\t1\n", "qrels/test.tsv:2: document \"missing\""},
		{"qrels/test.tsv", "q1\tt1\n", "qrels/test.tsv:1: want 3"},
		{"qrels/test.tsv", "q9\tt1\t1\n", "qrels/test.tsv:1: query \"q9\""},
	}
	for _, c := range cases {
		fsys := goodFS()
		fsys[c.file] = &fstest.MapFile{Data: []byte(c.body)}
		_, err := Read(fsys)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", c.file, err, c.want)
		}
	}
}
