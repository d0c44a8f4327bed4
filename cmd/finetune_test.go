package cmd

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rated-dev/rated/internal/testassets"
	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/defaultbench"
	"github.com/rated-dev/rated/pkg/train"
)

func runFinetune(args ...string) error {
	cmd := newRootCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(append([]string{"finetune"}, args...))
	return cmd.Execute()
}

// TestFinetuneFlagErrors covers the checks made before any library or model is loaded.
// modelFolder is a folder that passes finetune's first check of --model (its rated.yaml).
func modelFolder(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rated.yaml"), []byte("name: m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestFinetuneFlagErrors(t *testing.T) {
	// Prebuilt artifacts for batch 4 while the flags ask for the default batch 8.
	art := t.TempDir()
	desc := `{"format":1,"towers":"shared","batch":4,"negatives":1,"seq":16,"tau":0.05,"pooling":"mean",
		"encoder_inputs":["input_ids","attention_mask"],"inputs":["input_ids","attention_mask","labels"],"output":"last_hidden_state","parameters":[]}`
	files := map[string]string{"artifacts.json": desc, "training_model.onnx": "", "eval_model.onnx": "", "optimizer_model.onnx": "", "checkpoint": ""}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(art, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A readable benchmark, and a rated build-bench output folder holding one under syn/.
	benchDir, buildBenchDir := t.TempDir(), t.TempDir()
	b := &bench.Bench{Corpus: []bench.Doc{{ID: "a", Title: "A", Text: "tool a"}}, Queries: []bench.Query{{ID: "q", Text: "use a"}},
		Splits: map[string]bench.Qrels{"train": {"q": {"a": 1}}}}
	if err := b.Write(benchDir); err != nil {
		t.Fatal(err)
	}
	if err := b.Write(filepath.Join(buildBenchDir, "syn")); err != nil {
		t.Fatal(err)
	}
	// The shipped release (data/ecoagent) stores each file gzip-compressed as name.gz.
	releaseDir := t.TempDir()
	if err := b.Write(filepath.Join(releaseDir, "syn")); err != nil {
		t.Fatal(err)
	}
	gzipFiles(t, filepath.Join(releaseDir, "syn"), "corpus.jsonl", "queries.jsonl")
	empty := t.TempDir()
	out := filepath.Join(t.TempDir(), "out")
	// The benchmark has no dev split: validation off.
	dirs := []string{"--model", modelFolder(t), "--bench", benchDir, "--out", out, "--val-split", "-"}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no flags", nil, "--model, --bench and --out are required"},
		{"no out", []string{"--model", "m", "--bench", "b"}, "--model, --bench and --out are required"},
		{"tpu", append([]string{"--device", "tpu"}, dirs...), `--device "tpu": want cpu or cuda`},
		{"negative kind", append([]string{"--negative-kinds", "random,bm25"}, dirs...), `--negative-kinds "bm25": want hard and/or random`},
		// The benchmark is read before the training graph would be built: no artifacts, no venv needed.
		{"no benchmark", []string{"--model", modelFolder(t), "--bench", empty, "--out", out, "--home", t.TempDir()}, "benchmark " + empty + ": corpus.jsonl"},
		{"stale artifacts", append([]string{"--artifacts", art}, dirs...), "was built with batch 4, hard negatives 1, length 16"},
		{"build-bench folder", []string{"--artifacts", art, "--model", modelFolder(t), "--bench", buildBenchDir, "--out", out, "--val-split", "-"}, "was built with batch 4"},
		{"gzip release folder", []string{"--artifacts", art, "--model", modelFolder(t), "--bench", releaseDir, "--out", out, "--val-split", "-"}, "was built with batch 4"},
		{"missing artifacts", append([]string{"--artifacts", t.TempDir()}, dirs...), "artifacts.json"},
		// The source model is checked first: a folder without rated.yaml, a name not installed,
		// an --out that is the model (it would be replaced by the fine-tuned one) or inside it.
		{"not a model", []string{"--model", empty, "--bench", benchDir, "--out", out, "--home", t.TempDir()}, "--model " + empty + ": not a model folder (no rated.yaml)"},
		{"not installed", []string{"--model", "no-such-model", "--bench", benchDir, "--out", out, "--home", t.TempDir()}, "--model no-such-model: not a model folder"},
		{"out is the model", []string{"--model", dirs[1], "--bench", benchDir, "--out", dirs[1], "--val-split", "-"}, "overlap"},
		{"out inside the model", []string{"--model", dirs[1], "--bench", benchDir, "--out", filepath.Join(dirs[1], "ft"), "--val-split", "-"}, "overlap"},
		{"missing negatives", append([]string{"--negatives", filepath.Join(empty, "negatives.jsonl")}, dirs...), "negatives.jsonl: no such file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := runFinetune(c.args...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
}

// TestFinetuneRefusesBeforeWork: a split the benchmark lacks, --epochs 0 and an unknown --towers
// are refused right after the benchmark is read: before the output set begins and before the
// training graph would be built (no venv, no artifacts, no library in the home), naming the flag.
func TestFinetuneRefusesBeforeWork(t *testing.T) {
	benchDir := t.TempDir()
	b := &bench.Bench{Corpus: []bench.Doc{{ID: "a", Title: "A", Text: "tool a"}, {ID: "b", Title: "B", Text: "tool b"}},
		Queries: []bench.Query{{ID: "q", Text: "use a"}, {ID: "d", Text: "use b"}},
		Splits:  map[string]bench.Qrels{"train": {"q": {"a": 1}}, "dev": {"d": {"b": 1}}, "zero": {"q": {"a": 0}}}}
	if err := b.Write(benchDir); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--train-split", "nosuch"}, `--train-split "nosuch": ` + benchDir + ` has no qrels/nosuch.tsv (have [dev train zero])`},
		{[]string{"--train-split", "zero"}, `--train-split "zero": ` + benchDir + `/qrels/zero.tsv names no relevant tool`},
		{[]string{"--val-split", "nosuch"}, `--val-split "nosuch": ` + benchDir + ` has no qrels/nosuch.tsv (have [dev train zero]; --val-split - turns validation off)`},
		// Validation on the training queries chose the best checkpoint on them; a split whose
		// qrels grade every tool 0 made every MRR 0 and exported the source model.
		{[]string{"--train-split", "dev"}, `--val-split "dev" is the --train-split`},
		{[]string{"--val-split", "zero"}, `--val-split "zero": ` + benchDir + `/qrels/zero.tsv names no relevant tool`},
		{[]string{"--epochs", "0"}, "--epochs 0: must be at least 1"},
		{[]string{"--epochs", "0", "--train-split", "nosuch"}, "--epochs 0: must be at least 1"},
		{[]string{"--towers", "triple"}, `--towers "triple": want shared or dual`},
	}
	for _, c := range cases {
		out := filepath.Join(t.TempDir(), "out")
		err := runFinetune(append([]string{"--model", modelFolder(t), "--bench", benchDir, "--out", out, "--home", t.TempDir()}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want it to contain %q", c.args, err, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%v: --out exists after a refused run (%v)", c.args, err)
		}
	}
}

// TestFinetuneCUDAWithCPULibrary: --device cuda over the CPU build of the training library stops,
// before any step, with an error naming that library and how to get the GPU build.
func TestFinetuneCUDAWithCPULibrary(t *testing.T) {
	assets := testassets.Dir(t)
	lib := testassets.Need(t, "training-enabled ONNX Runtime library", filepath.Join(assets, "lib", "training", "libonnxruntime.so"))
	art := testassets.Need(t, "training artifacts all-minilm-l6-v2-test", filepath.Join(assets, "train", "all-minilm-l6-v2-test"))
	model := testassets.Model(t, "all-minilm-l6-v2")
	b, err := defaultbench.Load()
	if err != nil {
		t.Fatal(err)
	}
	benchDir := t.TempDir()
	if err := b.Write(benchDir); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	err = runFinetune("--model", model, "--bench", benchDir, "--out", out, "--artifacts", art, "--lib", lib,
		"--batch", "4", "--max-len", "16", "--train-split", "dev", "--val-split", "-", "--max-steps", "1", "--device", "cuda")
	if err == nil {
		t.Fatalf("--device cuda with %s: no error", lib)
	}
	for _, want := range []string{lib, "no CUDA execution provider", "RATED_GPU=1 rated setup training"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if !errors.Is(err, train.ErrNoCUDA) {
		t.Errorf("error %v does not wrap train.ErrNoCUDA", err)
	}
	if _, err := os.Stat(filepath.Join(out, "model.onnx")); err == nil {
		t.Error("a model folder was written although no step ran")
	}
}

// gzipFiles replaces each named file of dir by name.gz, as the shipped release stores them.
func gzipFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, name := range names {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write(raw); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".gz"), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}
