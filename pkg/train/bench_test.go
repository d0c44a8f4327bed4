package train

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/rated-dev/rated/internal/testassets"
)

// Benchmarks of one training step at batch 8 (one hard negative each: 24 rows), length 128:
//
//	library  ONNX Runtime alone: TrainStep + OptimizerStep + LazyResetGrad on tensors built once;
//	loop     what Run does per step: assemble the batch from texts (tokenize, pad), build the
//	         tensors, TrainStep, check the loss, Apply.
//
// Models: all-MiniLM-L6-v2 (the installed folder) and, with RATED_BENCH_BERT_BASE=1, a
// BERT-base-sized encoder with random weights (12 layers, hidden 768) from scripts/train/bert_onnx.py.
// The artifacts are built into a temporary folder with the train venv (a few seconds).

func buildBenchArtifacts(b *testing.B, modelDir string) *Artifacts {
	b.Helper()
	python := testassets.Need(b, "train venv", filepath.Join(testassets.Dir(b), "train-venv", "bin", "python"))
	out := filepath.Join(b.TempDir(), "artifacts")
	cmd := exec.Command(python, filepath.Join(testassets.Root(b), "scripts", "train", "build_artifacts.py"),
		"--model", modelDir, "--out", out, "--batch", "8", "--negatives", "1", "--seq", "128")
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build_artifacts: %v\n%s", err, tail(msg))
	}
	a, err := LoadArtifacts(out)
	if err != nil {
		b.Fatal(err)
	}
	return a
}

func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

func benchExamples(n int) []Example {
	// Tool-catalog-like texts that tokenize to roughly 30-60 tokens; padded to 128.
	out := make([]Example, n)
	for i := range out {
		out[i] = Example{
			QueryID:   fmt.Sprint(i),
			Query:     fmt.Sprintf("find a tool that can export the quarterly sales report number %d to a shared spreadsheet and notify the finance team", i),
			Positive:  fmt.Sprintf("Spreadsheet exporter %d: writes tabular data from reports into shared spreadsheets, keeps formatting, and sends a notification to the listed recipients when the export is done", i),
			Negatives: []string{fmt.Sprintf("Report viewer %d: renders quarterly sales reports as charts and tables in the browser, with filters by region, product line and sales representative", i)},
		}
	}
	return out
}

func benchmarkStep(b *testing.B, modelDir string) {
	rt, _ := testRuntime(b)
	art := buildBenchArtifacts(b, modelDir)
	threads := 0
	if v := os.Getenv("RATED_BENCH_THREADS"); v != "" {
		fmt.Sscan(v, &threads)
	}
	s, err := rt.OpenSession(art, "", SessionOptions{Threads: threads})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	asm := &Assembler{Artifacts: art, Tokenizer: loadTokenizer(b, modelDir)}
	examples := benchExamples(art.Batch)

	b.Run("library", func(b *testing.B) {
		batch, err := asm.Assemble(examples)
		if err != nil {
			b.Fatal(err)
		}
		in, err := s.tensors(batch)
		if err != nil {
			b.Fatal(err)
		}
		defer func() {
			for _, t := range in {
				t.Close()
			}
		}()
		step := func() {
			if _, err := s.ts.TrainStep(in); err != nil {
				b.Fatal(err)
			}
			if err := s.ts.OptimizerStep(); err != nil {
				b.Fatal(err)
			}
			if err := s.ts.LazyResetGrad(); err != nil {
				b.Fatal(err)
			}
		}
		step() // warm-up: first run allocates
		b.ResetTimer()
		for range b.N {
			step()
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
	})
	b.Run("loop", func(b *testing.B) {
		// ortTime is the time inside the library's calls (TrainStep, SetLearningRate,
		// OptimizerStep, LazyResetGrad); the rest of the step is the Go loop's overhead.
		var goTime, ortTime time.Duration
		step := func() {
			start := time.Now()
			batch, err := asm.Assemble(examples)
			if err != nil {
				b.Fatal(err)
			}
			in, err := s.tensors(batch)
			if err != nil {
				b.Fatal(err)
			}
			goTime += time.Since(start)
			ortStart := time.Now()
			if _, err := s.ts.TrainStep(in); err != nil {
				b.Fatal(err)
			}
			s.pending = true
			if err := s.Apply(1e-6); err != nil {
				b.Fatal(err)
			}
			ortTime += time.Since(ortStart)
			for _, t := range in {
				t.Close()
			}
		}
		step()
		goTime, ortTime = 0, 0
		b.ResetTimer()
		for range b.N {
			step()
		}
		total := b.Elapsed()
		b.ReportMetric(float64(b.N)/total.Seconds(), "steps/s")
		b.ReportMetric(float64(goTime.Microseconds())/float64(b.N), "assemble-µs/step")
		b.ReportMetric(100*float64(total-ortTime)/float64(total), "go-overhead-%")
	})
}

func BenchmarkStepMiniLM(b *testing.B) {
	benchmarkStep(b, testassets.Model(b, "all-minilm-l6-v2"))
}

func BenchmarkStepBERTBase(b *testing.B) {
	if os.Getenv("RATED_BENCH_BERT_BASE") != "1" {
		b.Skip("set RATED_BENCH_BERT_BASE=1 (builds a 440 MB random BERT-base model; minutes per step on 2 cores)")
	}
	python := testassets.Need(b, "train venv", filepath.Join(testassets.Dir(b), "train-venv", "bin", "python"))
	dir := filepath.Join(b.TempDir(), "bert-base")
	cmd := exec.Command(python, filepath.Join(testassets.Root(b), "scripts", "train", "bert_onnx.py"), "--random",
		"--layers", "12", "--hidden", "768", "--heads", "12", "--intermediate", "3072",
		"--tokenizer", filepath.Join(testassets.Model(b, "all-minilm-l6-v2"), "tokenizer.json"), "--out", dir)
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("bert_onnx: %v\n%s", err, tail(msg))
	}
	benchmarkStep(b, dir)
}
