package encode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rated-dev/rated/internal/cputime"
	"github.com/rated-dev/rated/internal/testassets"
	"github.com/rated-dev/rated/pkg/defaultbench"
)

// benchThreads is ONNX Runtime's intra-op thread count in the benchmarks ($RATED_BENCH_THREADS,
// default 1), the same for Go and Python.
func benchThreads() int {
	if n, err := strconv.Atoi(os.Getenv("RATED_BENCH_THREADS")); err == nil && n > 0 {
		return n
	}
	return 1
}

// benchTexts returns the first 256 ToolBench queries of data/toolbench (real agent requests,
// 30-80 tokens).
func benchTexts(b *testing.B) []string {
	texts := testassets.ToolBenchQueries(b)
	return texts[:min(256, len(texts))]
}

// budgetTexts are the texts of BenchmarkEncodeBudget: the embedded default catalog's tool texts
// ("name: description", 316, a long tail up to 512 tokens) and the 765 ToolBench queries.
func budgetTexts(b *testing.B) []string {
	db, err := defaultbench.Load()
	if err != nil {
		b.Fatal(err)
	}
	var texts []string
	for _, d := range db.Corpus {
		texts = append(texts, d.Title+": "+d.Text)
	}
	return append(texts, testassets.ToolBenchQueries(b)...)
}

// BenchmarkEncodeBudget compares batching schemes on the same 1,081 texts, Go and Python side
// by side: "chunks" is the former scheme (consecutive batches of 32 in input order, as the
// pre-budget code did between its sorts), "budgetT-bN" sorts all texts by token count and cuts
// batches of at most N rows and T padded tokens (pkg/encode's scheme; Python replicates it in
// testdata/bench_python.py). cpu-ns/token is process CPU per real (unpadded) token; padded/real
// is the padding overhead. RATED_BENCH_MODELS limits the models (comma-separated names).
func BenchmarkEncodeBudget(b *testing.B) {
	rt := sharedRuntime(b)
	texts := budgetTexts(b)
	threads := benchThreads()
	python := filepath.Join(testassets.Dir(b), "venv", "bin", "python")
	schemes := []struct {
		name          string
		batch, tokens int
	}{
		{"chunks32", 32, 0},
		{"budget1024-b64", 64, 1024},
		{"budget2048-b64", 64, 2048},
		{"budget4096-b64", 64, 4096},
		{"budget8192-b128", 128, 8192},
		{"budget4096-b16", 16, 4096},
		{"single", 1, 1 << 20},
	}
	for _, rm := range referenceModels {
		if only := os.Getenv("RATED_BENCH_MODELS"); only != "" && !slices.Contains(strings.Split(only, ","), rm.name) {
			continue
		}
		dir := filepath.Join(testassets.Dir(b), "models", rm.name)
		cfg, err := LoadConfig(dir)
		if err != nil {
			b.Skip(err)
		}
		for _, sc := range schemes {
			b.Run(fmt.Sprintf("%s/%s/go", rm.name, sc.name), func(b *testing.B) {
				opts := Options{Runtime: rt, Threads: threads, BatchSize: sc.batch, BatchTokens: sc.tokens}
				if sc.tokens == 0 { // chunks: no sort, every chunk of 32 in input order
					opts.BatchTokens = sc.batch * cfg.MaxLength
				}
				m, err := Open(dir, opts)
				if err != nil {
					b.Skip(err)
				}
				defer m.Close()
				enc := m.Uncached()
				run := func() {
					if sc.tokens > 0 {
						if _, err := enc.EncodeDocs(texts); err != nil {
							b.Fatal(err)
						}
						return
					}
					for start := 0; start < len(texts); start += sc.batch {
						if _, err := enc.EncodeDocs(texts[start:min(start+sc.batch, len(texts))]); err != nil {
							b.Fatal(err)
						}
					}
				}
				real, padded := m.plannedTokens(b, texts, sc.batch, sc.tokens)
				if _, err := enc.EncodeDocs(texts[:8]); err != nil { // warm-up
					b.Fatal(err)
				}
				cpu := processCPU()
				for b.Loop() {
					run()
				}
				b.ReportMetric(float64((processCPU()-cpu).Nanoseconds())/float64(b.N*real), "cpu-ns/token")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*real), "ns/token")
				b.ReportMetric(float64(padded)/float64(real), "padded/real")
			})
			b.Run(fmt.Sprintf("%s/%s/python", rm.name, sc.name), func(b *testing.B) {
				if _, err := os.Stat(python); err != nil {
					b.Skip("no reference venv")
				}
				req := map[string]any{
					"model": filepath.Join(dir, cfg.Model), "tokenizer": filepath.Join(dir, cfg.Tokenizer),
					"pooling": cfg.Pooling, "max_length": cfg.MaxLength, "threads": threads, "batch": sc.batch,
					"texts": texts, "passes": 1,
				}
				if sc.tokens > 0 {
					req["batch_tokens"] = sc.tokens
				}
				body, _ := json.Marshal(req)
				var cpuPerToken, wallPerToken, ratio float64
				for b.Loop() {
					var res struct {
						NsPerText    float64 `json:"ns_per_text"`
						CPUNsPerText float64 `json:"cpu_ns_per_text"`
						Texts        int     `json:"texts"`
						Tokens       int     `json:"tokens"`
						Padded       int     `json:"padded"`
					}
					cmd := exec.Command(python, "testdata/bench_python.py")
					cmd.Stdin = bytes.NewReader(body)
					var stderr bytes.Buffer
					cmd.Stderr = &stderr
					out, err := cmd.Output()
					if err != nil {
						b.Fatalf("python: %v\n%s", err, stderr.String())
					}
					if err := json.Unmarshal(out, &res); err != nil {
						b.Fatal(err)
					}
					cpuPerToken += res.CPUNsPerText * float64(res.Texts) / float64(res.Tokens)
					wallPerToken += res.NsPerText * float64(res.Texts) / float64(res.Tokens)
					ratio = float64(res.Padded) / float64(res.Tokens)
				}
				b.ReportMetric(cpuPerToken/float64(b.N), "cpu-ns/token")
				b.ReportMetric(wallPerToken/float64(b.N), "ns/token")
				b.ReportMetric(ratio, "padded/real")
			})
		}
	}
}

// plannedTokens returns the real and padded tokens of one pass of BenchmarkEncodeBudget: budget
// batching when tokens > 0, else consecutive chunks of batch texts.
func (m *Model) plannedTokens(b *testing.B, texts []string, batch, tokens int) (real, padded int) {
	t := m.towers[TowerDoc]
	length := func(s string) int {
		tb, err := t.tok.EncodeBatch([]string{t.prefix + s}, m.cfg.MaxLength)
		if err != nil {
			b.Fatal(err)
		}
		return tb.SeqLen
	}
	var batches [][]int
	if tokens > 0 {
		inputs := make([]string, len(texts))
		idx := make([]int, len(texts))
		for i, s := range texts {
			inputs[i], idx[i] = t.prefix+s, i
		}
		var err error
		if batches, err = m.planBatches(t, inputs, idx); err != nil {
			b.Fatal(err)
		}
	} else {
		for start := 0; start < len(texts); start += batch {
			var c []int
			for i := start; i < min(start+batch, len(texts)); i++ {
				c = append(c, i)
			}
			batches = append(batches, c)
		}
	}
	for _, c := range batches {
		longest := 0
		for _, i := range c {
			n := length(texts[i])
			real += n
			longest = max(longest, n)
		}
		padded += longest * len(c)
	}
	return real, padded
}

// BenchmarkEncode compares Go (pkg/encode: tokenizer + ONNX Runtime + pooling) with Python
// (tokenizers + onnxruntime + numpy) on the same model, texts, batch size and threads, in one
// run. One op is one pass over 256 ToolBench queries in batches of 1 or 32; ns/text is the figure
// to compare (run with -benchtime Nx for N passes each).
func BenchmarkEncode(b *testing.B) {
	rt := sharedRuntime(b)
	texts := benchTexts(b)
	threads := benchThreads()
	python := filepath.Join(testassets.Dir(b), "venv", "bin", "python")
	for _, rm := range referenceModels {
		dir := filepath.Join(testassets.Dir(b), "models", rm.name)
		for _, bs := range []int{1, 32} {
			b.Run(fmt.Sprintf("%s/go/batch%d/threads%d", rm.name, bs, threads), func(b *testing.B) {
				m, err := Open(dir, Options{Runtime: rt, Threads: threads, BatchSize: bs})
				if err != nil {
					b.Skip(err)
				}
				defer m.Close()
				if _, err := m.EncodeDocs(texts[:bs]); err != nil { // warm-up
					b.Fatal(err)
				}
				// One op is one pass over the texts in batches of bs.
				cpu := processCPU()
				for b.Loop() {
					for start := 0; start < len(texts); start += bs {
						if _, err := m.EncodeDocs(texts[start:min(start+bs, len(texts))]); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(texts)), "ns/text")
				b.ReportMetric(float64((processCPU()-cpu).Nanoseconds())/float64(b.N*len(texts)), "cpu-ns/text")
			})
			b.Run(fmt.Sprintf("%s/python/batch%d/threads%d", rm.name, bs, threads), func(b *testing.B) {
				if _, err := os.Stat(python); err != nil {
					b.Skip("no reference venv")
				}
				cfg, err := LoadConfig(dir)
				if err != nil {
					b.Skip(err)
				}
				body, _ := json.Marshal(map[string]any{
					"model": filepath.Join(dir, cfg.Model), "tokenizer": filepath.Join(dir, cfg.Tokenizer),
					"pooling": cfg.Pooling, "max_length": cfg.MaxLength, "threads": threads, "batch": bs,
					"texts": texts, "passes": 1,
				})
				var total, totalCPU float64
				for b.Loop() {
					var res struct {
						NsPerText    float64 `json:"ns_per_text"`
						CPUNsPerText float64 `json:"cpu_ns_per_text"`
					}
					cmd := exec.Command(python, "testdata/bench_python.py")
					cmd.Stdin = bytes.NewReader(body)
					var stderr bytes.Buffer
					cmd.Stderr = &stderr
					out, err := cmd.Output()
					if err != nil {
						b.Fatalf("python: %v\n%s", err, stderr.String())
					}
					if err := json.Unmarshal(out, &res); err != nil {
						b.Fatal(err)
					}
					total += res.NsPerText
					totalCPU += res.CPUNsPerText
				}
				b.ReportMetric(total/float64(b.N), "ns/text")
				b.ReportMetric(totalCPU/float64(b.N), "cpu-ns/text")
			})
		}
	}
}

// processCPU is the CPU time (user + system) this process has used: on a shared machine it
// measures the work done, where wall time also counts waiting for a core.
func processCPU() time.Duration {
	d, _ := cputime.Process() // getrusage(RUSAGE_SELF) cannot fail on Linux
	return d
}

// catalogTexts generates n deterministic tool descriptions of 20-60 words, like catalog entries
// ("Name: description").
func catalogTexts(n int) []string {
	words := strings.Fields("get list create update delete search send fetch convert translate weather " +
		"forecast stock price email message channel file upload download image video audio user account " +
		"payment invoice order product calendar event task issue repository branch database query table " +
		"record report chart map route location flight hotel booking news article summary text document " +
		"API key token OAuth webhook JSON CSV returns the a for with from by in of and to using service")
	rng := rand.New(rand.NewPCG(11, 12))
	out := make([]string, n)
	for i := range out {
		var sb strings.Builder
		fmt.Fprintf(&sb, "tool_%d_%s: ", i, words[rng.IntN(len(words))])
		for j := range 20 + rng.IntN(41) {
			if j > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(words[rng.IntN(len(words))])
		}
		out[i] = sb.String()
	}
	return out
}

// BenchmarkEncodeCatalog embeds a 5,000-tool catalog (batch 32, no cache) and reports the
// process's peak resident memory. Run it alone (-bench EncodeCatalog -benchtime 1x): peak RSS is
// process-wide.
func BenchmarkEncodeCatalog(b *testing.B) {
	rt := sharedRuntime(b)
	texts := catalogTexts(5000)
	for _, rm := range referenceModels {
		b.Run(rm.name, func(b *testing.B) {
			m, err := Open(filepath.Join(testassets.Dir(b), "models", rm.name), Options{Runtime: rt, Threads: benchThreads(), BatchSize: 32})
			if err != nil {
				b.Skip(err)
			}
			defer m.Close()
			for b.Loop() {
				if _, err := m.EncodeDocs(texts); err != nil {
					b.Fatal(err)
				}
			}
			var ru syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
			b.ReportMetric(float64(ru.Maxrss)/1024, "peakRSS-MiB")
			b.ReportMetric(float64(len(texts)*b.N)/b.Elapsed().Seconds(), "texts/s")
		})
	}
}
