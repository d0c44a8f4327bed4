package bench

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// gzipFile replaces path with path.gz holding the same bytes.
func gzipFile(t *testing.T, path string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path + ".gz")
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	zw.Write(raw)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	os.Remove(path)
}

// A benchmark whose files are all gzip-compressed (as data/ecoagent ships them) reads back the
// same as the plain files.
func TestReadGzipCompressed(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"corpus.jsonl":    `{"_id":"t1","title":"Send mail","text":"Sends an email"}` + "\n" + `{"_id":"t2","title":"Weather","text":"Forecast"}` + "\n",
		"queries.jsonl":   `{"_id":"q1","text":"email my boss"}` + "\n" + `{"_id":"q2","text":"rain tomorrow?"}` + "\n",
		"qrels/test.tsv":  "query-id\tcorpus-id\tscore\nq1\tt1\t1\n",
		"qrels/train.tsv": "query-id\tcorpus-id\tscore\nq2\tt2\t1\n",
		"catalog.jsonl":   `{"id":"t1","name":"Send mail","description":"Sends an email","platform":"n8n"}` + "\n" + `{"id":"t2","name":"Weather","description":"Forecast","platform":"n8n"}` + "\n",
	}
	for name, body := range files {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
		os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644)
	}
	plain, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for name := range files {
		gzipFile(t, filepath.Join(dir, name))
	}
	packed, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(plain, packed) || len(packed.Corpus) != 2 || len(packed.Tools) != 2 || packed.Splits["test"]["q1"]["t1"] != 1 {
		t.Fatalf("plain %+v\npacked %+v", plain, packed)
	}
	rc, err := OpenFile(filepath.Join(dir, "queries.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if string(got) != files["queries.jsonl"] {
		t.Fatalf("OpenFile: %q", got)
	}
	if _, err := OpenFile(filepath.Join(dir, "absent.jsonl")); !os.IsNotExist(err) {
		t.Fatalf("absent file: %v", err)
	}
	// Both forms of one split is ambiguous.
	os.WriteFile(filepath.Join(dir, "qrels", "test.tsv"), []byte(files["qrels/test.tsv"]), 0o644)
	if _, err := ReadDir(dir); err == nil || !strings.Contains(err.Error(), "both qrels/test.tsv and qrels/test.tsv.gz") {
		t.Fatalf("both forms: %v", err)
	}
	// So is both forms of the corpus (the plain one silently won).
	os.Remove(filepath.Join(dir, "qrels", "test.tsv"))
	os.WriteFile(filepath.Join(dir, "corpus.jsonl"), []byte(files["corpus.jsonl"]), 0o644)
	if _, err := ReadDir(dir); err == nil || !strings.Contains(err.Error(), "both corpus.jsonl and corpus.jsonl.gz exist") {
		t.Fatalf("both forms of the corpus: %v", err)
	}
	os.Remove(filepath.Join(dir, "corpus.jsonl"))
	// A .gz cut short mid-stream names the compressed file and what is wrong with it (it was
	// reported as malformed JSON of queries.jsonl).
	whole, _ := os.ReadFile(filepath.Join(dir, "queries.jsonl.gz"))
	os.WriteFile(filepath.Join(dir, "queries.jsonl.gz"), whole[:len(whole)-12], 0o644)
	if _, err := ReadDir(dir); err == nil || !strings.Contains(err.Error(), "queries.jsonl.gz: corrupt or truncated gzip data") {
		t.Fatalf("truncated gzip: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "queries.jsonl.gz"), whole, 0o644)
	// A line error inside a .gz names the .gz, the file that exists (it named queries.jsonl).
	writeGz := func(name, body string) {
		var b strings.Builder
		zw := gzip.NewWriter(&b)
		zw.Write([]byte(body))
		zw.Close()
		os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644)
	}
	writeGz("queries.jsonl.gz", files["queries.jsonl"]+"{bad\n")
	if _, err := ReadDir(dir); err == nil || !strings.Contains(err.Error(), "queries.jsonl.gz:3:") {
		t.Fatalf("bad line in queries.jsonl.gz: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "queries.jsonl.gz"), whole, 0o644)
	writeGz("qrels/test.tsv.gz", "q1\tt1\tx\n")
	if _, err := ReadDir(dir); err == nil || !strings.Contains(err.Error(), `qrels/test.tsv.gz:1: score "x" is not an integer`) {
		t.Fatalf("bad row in qrels/test.tsv.gz: %v", err)
	}
	writeGz("qrels/test.tsv.gz", files["qrels/test.tsv"])
	// A corrupt .gz is an error naming it.
	os.WriteFile(filepath.Join(dir, "corpus.jsonl.gz"), []byte("not gzip"), 0o644)
	if _, err := ReadDir(dir); err == nil || !strings.Contains(err.Error(), "corpus.jsonl.gz") {
		t.Fatalf("corrupt gzip: %v", err)
	}
}

// TestFileExists: a file found plain or as name.gz, and neither.
func TestFileExists(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"plain.jsonl", "packed.jsonl.gz"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]bool{"plain.jsonl": true, "packed.jsonl": true, "packed.jsonl.gz": true, "missing.jsonl": false} {
		if got := FileExists(filepath.Join(dir, name)); got != want {
			t.Errorf("FileExists(%s) = %v, want %v", name, got, want)
		}
	}
}
