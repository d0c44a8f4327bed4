package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rated-dev/rated/pkg/synth"
)

// writeBench writes a small benchmark in the BEIR layout; files maps a path to its content.
func writeBench(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func goodBenchFiles() map[string]string {
	return map[string]string{
		"corpus.jsonl": `{"_id": "slack", "title": "slack", "text": "post a message to a channel"}
{"_id": "sms", "title": "sms", "text": "send a text message to a phone"}
{"_id": "mail", "title": "mail", "text": "send an email"}
`,
		"queries.jsonl": `{"_id": "q1", "text": "post to a slack channel"}
{"_id": "q2", "text": "text my phone"}
{"_id": "q3", "text": "send an email please"}
{"_id": "q4", "text": "never judged"}
`,
		"qrels/test.tsv": "query-id\tcorpus-id\tscore\nq1\tslack\t1\nq2\tsms\t1\nq3\tmail\t1\n",
	}
}

func runRated(args ...string) (string, string, error) {
	cmd := newRootCmd()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), errOut.String(), err
}

func TestEvalOfflineCommand(t *testing.T) {
	dir := writeBench(t, goodBenchFiles())
	out := filepath.Join(t.TempDir(), "out")
	stdout, stderr, err := runRated("eval", "offline", "--bench", dir, "--out", out, "--rounds", "200", "--retrievers", "bm25,tfidf,bm25:k1=1.2")
	if err != nil {
		t.Fatalf("eval offline: %v\n%s", err, stderr)
	}
	// Every query names its tool's unique words: MRR 1 for all three retrievers.
	for _, s := range []string{"| BM25 ", "| TF-IDF ", "| BM25 (k1=1.2, b=0.75) ", "Hit@1", "Recall@1", "(baseline)"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("stdout lacks %q:\n%s", s, stdout)
		}
	}
	if !strings.Contains(stdout, "| 1.000 ") {
		t.Errorf("want MRR 1.000 in:\n%s", stdout)
	}
	if !strings.Contains(stderr, "1 queries in queries.jsonl have no qrels in any split") {
		t.Errorf("no warning about q4 in stderr:\n%s", stderr)
	}
	for _, f := range []string{"table1.md", "table1.csv", "table1.json", "table1.tex", "per_query.csv", "qrels.test.trec",
		"runs/bm25.trec", "runs/tfidf.trec", "runs/bm25_k1_1.2.trec"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
}

func TestEvalOfflineCommandErrors(t *testing.T) {
	good := goodBenchFiles()
	with := func(name, content string) map[string]string {
		m := map[string]string{}
		for k, v := range good {
			m[k] = v
		}
		m[name] = content
		return m
	}
	cases := []struct {
		name  string
		files map[string]string
		args  []string
		want  string
	}{
		{"malformed corpus line", with("corpus.jsonl", "{\"_id\": \"slack\", \"text\": \"x\"}\n{\"_id\": \"sms\", \"text\": \n"), nil, "corpus.jsonl:2:"},
		{"malformed query line", with("queries.jsonl", "{\"_id\": \"q1\", \"text\": \"x\"}\nnot json\n"), nil, "queries.jsonl:2:"},
		{"qrels row naming a missing tool", with("qrels/test.tsv", "q1\tslack\t1\nq2\tghost\t1\n"), nil, `qrels/test.tsv:2: document "ghost" is not in corpus.jsonl`},
		{"qrels row naming a missing query", with("qrels/test.tsv", "q1\tslack\t1\nq9\tsms\t1\n"), nil, `qrels/test.tsv:2: query "q9" is not in queries.jsonl`},
		{"qrels row with two columns", with("qrels/test.tsv", "q1\tslack\n"), nil, "qrels/test.tsv:1: want 3 tab-separated columns"},
		{"missing split", good, []string{"--split", "dev"}, `split "dev": no qrels/dev.tsv (have test)`},
		{"unknown retriever", good, []string{"--retrievers", "bm25,splade"}, `unknown retriever "splade"`},
		{"bad measure", good, []string{"--measures", "MRR,Q@5"}, `measure "Q@5"`},
		{"cutoff above the depth", good, []string{"--depth", "5", "--measures", "MRR,Recall@50"}, "--measures Recall@50: cutoff 50 is above --depth 5"},
		{"no relevant tool in the split", with("qrels/test.tsv", "q1\tslack\t0\n"), nil, "no query has a relevant tool"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := writeBench(t, c.files)
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"eval", "offline", "--bench", dir, "--out", out}, c.args...)
			_, _, err := runRated(args...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
			if _, err := os.Stat(filepath.Join(out, "table1.md")); err == nil {
				t.Error("a table was written despite the error")
			}
		})
	}
	if _, _, err := runRated("eval", "offline"); err == nil || !strings.Contains(err.Error(), "--out is required") {
		t.Errorf("missing --out: %v", err)
	}
}

// TestRerankDefaultIsTheChosenGenerator: without --rerank-config the reranker talks to the
// EcoAgent generator's configuration as the repository's file says it.
func TestRerankDefaultIsTheChosenGenerator(t *testing.T) {
	got, name, err := loadCandidateConfig("", RerankGenerator)
	if err != nil {
		t.Fatal(err)
	}
	want, err := synth.LoadLLMConfig(filepath.Join("..", "configs", filepath.FromSlash(RerankGenerator)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Model != want.Model || got.ResolvedBaseURL() != want.ResolvedBaseURL() || got.TimeoutS != want.TimeoutS || !strings.Contains(name, "embedded") {
		t.Errorf("embedded %s: %s at %s; the file says %s at %s", name, got.Model, got.ResolvedBaseURL(), want.Model, want.ResolvedBaseURL())
	}
}

// A measure cut off below the run depth is refused before any work: no --out is created.
func TestEvalOfflineRefusesCutoffAboveDepth(t *testing.T) {
	dir := writeBench(t, goodBenchFiles())
	out := filepath.Join(t.TempDir(), "out")
	_, _, err := runRated("eval", "offline", "--bench", dir, "--out", out, "--depth", "5", "--measures", "Recall@50")
	if err == nil || !strings.Contains(err.Error(), "eval offline: --measures Recall@50: cutoff 50 is above --depth 5") {
		t.Fatalf("error %v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("--out exists after a refused run (%v)", err)
	}
}
