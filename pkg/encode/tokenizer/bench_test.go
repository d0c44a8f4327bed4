package tokenizer

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rated-dev/rated/internal/cputime"
	"github.com/rated-dev/rated/internal/testassets"
)

// benchMaxLen is the truncation length of the benchmarks (bge-small-en-v1.5's model maximum).
const benchMaxLen = 512

// cpuTime is the CPU time (user + system, all threads) the process has used so far.
func cpuTime(b *testing.B) time.Duration {
	d, err := cputime.Process()
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// benchTexts are the benchmark inputs: the tool descriptions and the 765 ToolBench queries.
func benchTexts(b *testing.B) []string {
	return append(loadToolDescriptions(b), loadQueries(b)...)
}

// BenchmarkTokenizer times Go and the reference Python `tokenizers` on the same tokenizer.json
// and inputs, single-threaded: Encode per text, and EncodeBatch over chunks of 32 (padded to the
// longest). Every sub-benchmark reports ns/text (wall clock) and cpu-ns/text (CPU time of the whole
// process, which stays meaningful on a loaded machine); the python/* rows run the reference once
// per benchmark (testdata/bench_reference.py, TOKENIZERS_PARALLELISM=false, RAYON_NUM_THREADS=1).
//
//	go test -run '^$' -bench BenchmarkTokenizer -cpu 1 ./pkg/encode/tokenizer/
func BenchmarkTokenizer(b *testing.B) {
	path := filepath.Join(testassets.Model(b, "bge-small-en-v1.5"), "tokenizer.json")
	texts := benchTexts(b)
	tk, err := Load(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := tk.SetTruncation(benchMaxLen); err != nil {
		b.Fatal(err)
	}
	if err := tk.SetPadding(0); err != nil {
		b.Fatal(err)
	}
	const batch = 32
	b.Run("go/encode", func(b *testing.B) {
		b.ReportAllocs()
		cpu := cpuTime(b)
		for i := 0; i < b.N; i++ {
			tk.Encode(texts[i%len(texts)])
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/text")
		b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/text")
	})
	b.Run("go/encode_batch32", func(b *testing.B) {
		b.ReportAllocs()
		cpu := cpuTime(b)
		chunk := 0
		for i := 0; i < b.N; i++ {
			start := (chunk * batch) % len(texts)
			tk.EncodeBatch(texts[start:min(start+batch, len(texts))], benchMaxLen)
			chunk++
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/text")
		b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N*batch), "cpu-ns/text")
	})
	for _, mode := range []string{"encode", "encode_batch"} {
		name := "python/" + mode
		if mode == "encode_batch" {
			name += "32"
		}
		b.Run(name, func(b *testing.B) {
			python := testassets.Python(b)
			textsPath := filepath.Join(b.TempDir(), "texts.json")
			data, err := json.Marshal(texts)
			if err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(textsPath, data, 0o644); err != nil {
				b.Fatal(err)
			}
			cmd := exec.Command(python, filepath.Join("testdata", "bench_reference.py"), path, textsPath, mode,
				strconv.Itoa(benchMaxLen), strconv.Itoa(batch), "5")
			cmd.Env = append(os.Environ(), "TOKENIZERS_PARALLELISM=false", "RAYON_NUM_THREADS=1")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				b.Fatalf("reference benchmark: %v\n%s", err, stderr.String())
			}
			fields := strings.Fields(string(out))
			if len(fields) != 2 {
				b.Fatalf("reference benchmark output %q: want wall and CPU ns per text", out)
			}
			wall, err1 := strconv.ParseFloat(fields[0], 64)
			cpu, err2 := strconv.ParseFloat(fields[1], 64)
			if err1 != nil || err2 != nil {
				b.Fatalf("reference benchmark output %q: not numbers", out)
			}
			// One measured run of the reference is the whole benchmark, whatever b.N is.
			b.ReportMetric(wall, "ns/text")
			b.ReportMetric(cpu, "cpu-ns/text")
		})
	}
}
