package bench

import (
	"fmt"
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
		{"corpus.jsonl", `{"_id":"t1","text":"x"}` + "\n{oops\n", "corpus.jsonl:2:"},
		{"queries.jsonl", `{"text":"no id"}` + "\n", "queries.jsonl:1:"},
		{"qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\tmissing\t1\n", "qrels/test.tsv:2: document \"missing\""},
		{"qrels/test.tsv", "q1\tt1\n", "qrels/test.tsv:1: want 3"},
		{"qrels/test.tsv", "q9\tt1\t1\n", "qrels/test.tsv:1: query \"q9\""},
		// A stray trailing tab is a fourth column (trimmed away, the row passed); an empty
		// score is named as such (it was "got 2" columns).
		{"qrels/test.tsv", "q1\tt1\t1\t\n", "qrels/test.tsv:1: want 3 tab-separated columns (query-id, corpus-id, score), got 4"},
		{"qrels/test.tsv", "q1\tt1\t\n", `qrels/test.tsv:1: score "" is not an integer`},
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
		// Misnamed fields used to load as empty texts and give all-zero tables.
		{"query under \"query\" instead of \"text\"", "queries.jsonl",
			`{"_id":"q1","text":"find a"}` + "\n" + `{"_id":"q2","query":"find b"}` + "\n",
			[]string{`queries.jsonl:2: unknown field "query": a BEIR query has only the fields "_id", "text", "metadata"`}},
		{"catalog-style corpus record", "corpus.jsonl",
			`{"_id":"t1","name":"a","description":"x"}` + "\n" + `{"_id":"t2","title":"b","text":"y"}` + "\n",
			[]string{`corpus.jsonl:1: unknown field "description", "name": a BEIR corpus record has only the fields "_id", "title", "text", "metadata" (a tool's name goes in "title", its description in "text")`}},
		{"field in another case", "corpus.jsonl",
			`{"_id":"t1","title":"a","text":"x"}` + "\n" + `{"_id":"t2","Title":"b","text":"y"}` + "\n",
			[]string{`corpus.jsonl:2: unknown field "Title"`}},
		{"query without text", "queries.jsonl",
			`{"_id":"q1","text":"find a"}` + "\n" + `{"_id":"q2","text":" ","metadata":{"split":"test"}}` + "\n",
			[]string{`queries.jsonl:2: query "q2" has an empty "text"`}},
		{"document without title and text", "corpus.jsonl",
			`{"_id":"t1","title":"a","text":"x"}` + "\n" + `{"_id":"t2","metadata":{"platform":"n8n"}}` + "\n",
			[]string{`corpus.jsonl:2: document "t2" has an empty "title" and "text"`}},
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

// TestReadAcceptsTitleOrTextAlone: a document needs a title or a text, not both (BEIR corpora
// such as SciFact have documents with an empty title), and metadata is kept.
func TestReadAcceptsTitleOrTextAlone(t *testing.T) {
	fsys := goodFS()
	fsys["corpus.jsonl"] = &fstest.MapFile{Data: []byte(`{"_id":"t1","title":"","text":"x","metadata":{"platform":"n8n"}}` + "\n" + `{"_id":"t2","title":"b"}` + "\n")}
	b, err := Read(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if b.Corpus[0].Text != "x" || b.Corpus[0].Metadata["platform"] != "n8n" || b.Corpus[1].Title != "b" || b.Corpus[1].Text != "" {
		t.Fatalf("corpus %+v", b.Corpus)
	}
}

// TestReadRefusesCatalogOfAnotherCorpus: a catalog.jsonl that lacks a corpus document used to
// be ignored for that document (its prior came from the corpus fields under platform "other"):
// with no id in common, silently for every tool. Both are refused, naming the ids; catalog
// records without a document are allowed.
func TestReadRefusesCatalogOfAnotherCorpus(t *testing.T) {
	rec := func(id string) string {
		return `{"id":"` + id + `","name":"n","description":"d","platform":"n8n"}` + "\n"
	}
	cases := []struct {
		name, catalog, want string
	}{
		{"no id in common", rec("x1") + rec("x2"),
			`catalog.jsonl: none of its 2 tool ids is a corpus.jsonl "_id" (catalog: "x1", "x2"; corpus: "t1", "t2"): it describes another corpus`},
		{"one document missing", rec("t2") + rec("x1"),
			`catalog.jsonl: 1 of the 2 corpus.jsonl documents have no catalog record ("t1"): their static prior would come from the corpus fields under platform "other"`},
		{"every document present, one extra record", rec("t1") + rec("t2") + rec("x1"), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fsys := goodFS()
			fsys["catalog.jsonl"] = &fstest.MapFile{Data: []byte(c.catalog)}
			b, err := Read(fsys)
			if c.want == "" {
				if err != nil || len(b.Tools) != 3 || b.CorpusTools()[0].Platform != "n8n" {
					t.Fatalf("a catalog covering the corpus: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
	// Only the first five missing ids are named.
	var corpus, cat strings.Builder
	for i := range 8 {
		fmt.Fprintf(&corpus, `{"_id":"t%d","text":"x"}`+"\n", i)
		cat.WriteString(rec(fmt.Sprintf("y%d", i)))
	}
	fsys := goodFS()
	fsys["corpus.jsonl"] = &fstest.MapFile{Data: []byte(corpus.String())}
	fsys["qrels/test.tsv"] = &fstest.MapFile{Data: []byte("q1\tt1\t1\n")}
	fsys["catalog.jsonl"] = &fstest.MapFile{Data: []byte(cat.String())}
	_, err := Read(fsys)
	if err == nil || !strings.Contains(err.Error(), `corpus: "t0", "t1", "t2", "t3", "t4", …)`) {
		t.Fatalf("error %v, want the first five corpus ids and an ellipsis", err)
	}
}
