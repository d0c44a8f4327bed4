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

// TestReadRefusesSilentlyWrongInput: inputs that used to load with a changed meaning (issue 16)
// are errors naming the file, the line and what is wrong.
func TestReadRefusesSilentlyWrongInput(t *testing.T) {
	cases := []struct {
		name, file, body string
		want             []string
	}{
		{"duplicate qrels row with another grade", "qrels/test.tsv",
			"query-id\tcorpus-id\tscore\nq1\tt1\t1\nq2\tt2\t1\nq1\tt1\t0\n",
			[]string{"qrels/test.tsv:4:", "q1", "t1", "grade 0", "line 2", "grade 1"}},
		{"invalid UTF-8 in a corpus id", "corpus.jsonl",
			"{\"_id\":\"t1\",\"title\":\"a\",\"text\":\"x\"}\n{\"_id\":\"t\xff2\",\"title\":\"b\",\"text\":\"y\"}\n",
			[]string{"corpus.jsonl:2:", "invalid UTF-8", "byte 10"}},
		{"invalid UTF-8 in a query id", "queries.jsonl",
			"{\"_id\":\"q1\",\"text\":\"find a\"}\n{\"_id\":\"q\xc32\",\"text\":\"find b\"}\n",
			[]string{"queries.jsonl:2:", "invalid UTF-8"}},
		{"lone surrogate escape in a corpus id", "corpus.jsonl",
			`{"_id":"t1","title":"a","text":"x"}` + "\n" + `{"_id":"t2\udc80","title":"b","text":"y"}` + "\n",
			[]string{"corpus.jsonl:2:", `_id`, "U+FFFD"}},
		{"invalid UTF-8 in qrels", "qrels/test.tsv",
			"query-id\tcorpus-id\tscore\nq1\tt\xff1\t1\n",
			[]string{"qrels/test.tsv:2:", "invalid UTF-8"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fsys := goodFS()
			fsys[c.file] = &fstest.MapFile{Data: []byte(c.body)}
			_, err := Read(fsys)
			if err == nil {
				t.Fatal("loaded without error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestReadIdsDifferingInInvalidBytes: two ids that differ only in invalid bytes are reported
// as invalid UTF-8 on the first of them, not as a confusing duplicate of a U+FFFD id.
func TestReadIdsDifferingInInvalidBytes(t *testing.T) {
	fsys := goodFS()
	fsys["corpus.jsonl"] = &fstest.MapFile{Data: []byte("{\"_id\":\"t\xfe\",\"title\":\"a\",\"text\":\"x\"}\n{\"_id\":\"t\xff\",\"title\":\"b\",\"text\":\"y\"}\n")}
	_, err := Read(fsys)
	if err == nil || !strings.Contains(err.Error(), "corpus.jsonl:1:") || !strings.Contains(err.Error(), "invalid UTF-8") || strings.Contains(err.Error(), "duplicate") {
		t.Fatalf("error %v", err)
	}
}

// TestReadQrelsHeaderAfterBOMOrBlankLines: a UTF-8 byte-order mark or blank lines before the
// BEIR header are skipped (both are common in files saved by spreadsheet tools).
func TestReadQrelsHeaderAfterBOMOrBlankLines(t *testing.T) {
	for name, body := range map[string]string{
		"BOM":        "\ufeffquery-id\tcorpus-id\tscore\nq1\tt1\t1\nq2\tt2\t1\n",
		"blank line": "\n  \nquery-id\tcorpus-id\tscore\nq1\tt1\t1\nq2\tt2\t1\n",
		"CRLF":       "query-id\tcorpus-id\tscore\r\nq1\tt1\t1\r\nq2\tt2\t1\r\n",
	} {
		fsys := goodFS()
		fsys["qrels/test.tsv"] = &fstest.MapFile{Data: []byte(body)}
		b, err := Read(fsys)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got := b.Relevant("test", "q2"); !reflect.DeepEqual(got, []string{"t2"}) {
			t.Errorf("%s: Relevant(q2) = %v", name, got)
		}
	}
	// A BOM at the start of a JSONL file is skipped too.
	fsys := goodFS()
	fsys["corpus.jsonl"] = &fstest.MapFile{Data: []byte("\ufeff" + `{"_id":"t1","title":"a","text":"x"}` + "\n" + `{"_id":"t2","title":"b","text":"y"}` + "\n")}
	if b, err := Read(fsys); err != nil || b.Corpus[0].ID != "t1" {
		t.Errorf("corpus with BOM: %v", err)
	}
	// A header row further down is an error naming its line, not a bad score.
	fsys = goodFS()
	fsys["qrels/test.tsv"] = &fstest.MapFile{Data: []byte("q1\tt1\t1\nquery-id\tcorpus-id\tscore\n")}
	if _, err := Read(fsys); err == nil || !strings.Contains(err.Error(), "qrels/test.tsv:2: header row") {
		t.Errorf("late header: %v", err)
	}
}

// TestRelevantQueries: only queries with a grade > 0 count.
func TestRelevantQueries(t *testing.T) {
	fsys := goodFS()
	fsys["qrels/test.tsv"] = &fstest.MapFile{Data: []byte("q1\tt1\t0\nq2\tt2\t1\n")}
	b, err := Read(fsys)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, q := range b.RelevantQueries("test") {
		ids = append(ids, q.ID)
	}
	if !reflect.DeepEqual(ids, []string{"q2"}) {
		t.Fatalf("RelevantQueries = %v, want [q2]", ids)
	}
}
