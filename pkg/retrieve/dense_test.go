package retrieve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rated-dev/rated/internal/cputime"
	"github.com/rated-dev/rated/internal/testassets"
	"github.com/rated-dev/rated/pkg/bench"
)

// tableEncoder is a test encoder: it looks texts up in a table (queries and docs alike) and
// records the document texts it was asked to embed.
type tableEncoder struct {
	dim     int
	vecs    map[string][]float32
	docSeen []string
}

func (e *tableEncoder) Name() string { return "table" }
func (e *tableEncoder) Dim() int     { return e.dim }
func (e *tableEncoder) lookup(texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, s := range texts {
		v, ok := e.vecs[s]
		if !ok {
			return nil, fmt.Errorf("no vector for %q", s)
		}
		out[i] = v
	}
	return out, nil
}
func (e *tableEncoder) EncodeQueries(texts []string) ([][]float32, error) { return e.lookup(texts) }
func (e *tableEncoder) EncodeDocs(texts []string) ([][]float32, error) {
	e.docSeen = append(e.docSeen, texts...)
	return e.lookup(texts)
}

// bruteForce ranks all documents by float64 dot product, then by index: the reference.
func bruteForce(docs [][]float32, q []float32, k int) []Candidate {
	all := make([]Candidate, len(docs))
	for i, d := range docs {
		var s float64
		for j := range d {
			s += float64(d[j]) * float64(q[j])
		}
		all[i] = Candidate{ID: fmt.Sprintf("d%d", i), Index: i, Score: s}
	}
	slices.SortStableFunc(all, func(a, b Candidate) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return a.Index - b.Index
	})
	return all[:min(k, len(all))]
}

func newTestDense(t testing.TB, docs [][]float32, dim int) *Dense {
	t.Helper()
	ids := make([]string, len(docs))
	for i := range docs {
		ids[i] = fmt.Sprintf("d%d", i)
	}
	d, err := NewDenseFromVectors(&tableEncoder{dim: dim}, ids, docs)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDenseTopKExactTies uses vectors of quarter-integers, whose float32 dot products are exact
// in any summation order, with duplicated documents: the ranking must equal the brute-force one
// exactly, ties broken by corpus order, for single and batched queries.
func TestDenseTopKExactTies(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, dim = 300, 8
	docs := make([][]float32, n)
	for i := range docs {
		if i > 0 && i%7 == 0 { // exact duplicates of earlier documents
			docs[i] = docs[rng.IntN(i)]
			continue
		}
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(rng.IntN(5)-2) / 4 // {-0.5 … 0.5}: many equal scores
		}
		docs[i] = v
	}
	d := newTestDense(t, docs, dim)
	var queries [][]float32
	for range 40 {
		q := make([]float32, dim)
		for j := range q {
			q[j] = float32(rng.IntN(9)-4) / 4
		}
		queries = append(queries, q)
	}
	queries = append(queries, make([]float32, dim)) // all scores tie at 0
	for _, k := range []int{1, 5, 10, n, n + 50} {
		batch, err := d.SearchVectors(queries, k)
		if err != nil {
			t.Fatal(err)
		}
		for qi, q := range queries {
			want := bruteForce(docs, q, k)
			got, err := d.SearchVector(q, k)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("k=%d query %d: SearchVector\n got  %v\n want %v", k, qi, got[:min(5, len(got))], want[:min(5, len(want))])
			}
			if !slices.Equal(batch[qi], want) {
				t.Fatalf("k=%d query %d: SearchVectors differs from brute force", k, qi)
			}
		}
	}
}

// TestDenseTopKRandom compares Gaussian vectors with the float64 brute force: scores must agree
// to float32 precision and ids must agree wherever neighbouring scores are not within it.
func TestDenseTopKRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n, dim, k = 2000, 64, 10
	docs := make([][]float32, n)
	for i := range docs {
		docs[i] = make([]float32, dim)
		for j := range docs[i] {
			docs[i][j] = float32(rng.NormFloat64())
		}
	}
	d := newTestDense(t, docs, dim)
	queries := make([][]float32, 301) // several query chunks of 64, not a multiple of the kernel height 4; n spans 4 document blocks
	for i := range queries {
		queries[i] = make([]float32, dim)
		for j := range queries[i] {
			queries[i][j] = float32(rng.NormFloat64())
		}
	}
	batch, err := d.SearchVectors(queries, k)
	if err != nil {
		t.Fatal(err)
	}
	const tol = 1e-4
	for qi, q := range queries {
		want := bruteForce(docs, q, k+1)
		single, err := d.SearchVector(q, k)
		if err != nil {
			t.Fatal(err)
		}
		for _, got := range [][]Candidate{single, batch[qi]} {
			if len(got) != k {
				t.Fatalf("query %d: %d candidates, want %d", qi, len(got), k)
			}
			for r := range k {
				if math.Abs(got[r].Score-want[r].Score) > tol {
					t.Fatalf("query %d rank %d: score %v, want %v", qi, r, got[r].Score, want[r].Score)
				}
				nearTie := (r > 0 && want[r-1].Score-want[r].Score < tol) || want[r].Score-want[r+1].Score < tol
				if got[r].ID != want[r].ID && !nearTie {
					t.Fatalf("query %d rank %d: %s, want %s", qi, r, got[r].ID, want[r].ID)
				}
			}
		}
	}
}

// TestNewDenseEncodesDocText checks the corpus texts sent to the encoder, the query path and the
// bandit context vector.
func TestNewDenseEncodesDocText(t *testing.T) {
	enc := &tableEncoder{dim: 2, vecs: map[string][]float32{
		"Weather: get the forecast": {1, 0},
		"Stocks: get a quote":       {0, 1},
		"only text":                 {0.6, 0.8},
		"forecast for Paris?":       {3, 4}, // not normalised: QueryVector must normalise it
	}}
	docs := []bench.Doc{
		{ID: "w", Title: "Weather", Text: "get the forecast"},
		{ID: "s", Title: "Stocks", Text: "get a quote"},
		{ID: "t", Text: "only text"},
	}
	var progress []int
	d, err := NewDense(enc, docs, DenseOptions{Progress: func(done, total int) { progress = append(progress, done, total) }})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Weather: get the forecast", "Stocks: get a quote", "only text"}; !slices.Equal(enc.docSeen, want) {
		t.Errorf("encoded %q, want %q", enc.docSeen, want)
	}
	// One encoder call for the whole corpus (tableEncoder has no progress): one report at the end.
	if want := []int{3, 3}; !slices.Equal(progress, want) {
		t.Errorf("progress %v, want %v", progress, want)
	}
	if d.Name() != "dense:table" || d.Dim() != 2 || d.Len() != 3 {
		t.Errorf("Name/Dim/Len = %s/%d/%d", d.Name(), d.Dim(), d.Len())
	}
	got, err := d.Search("forecast for Paris?", 2)
	if err != nil {
		t.Fatal(err)
	}
	// scores: w = 3, s = 4, t = 0.6*3+0.8*4 = 5.
	want := []Candidate{{ID: "t", Index: 2, Score: 5}, {ID: "s", Index: 1, Score: 4}}
	for i := range want {
		if got[i].ID != want[i].ID || got[i].Index != want[i].Index || math.Abs(got[i].Score-want[i].Score) > 1e-6 {
			t.Fatalf("Search = %v, want %v", got, want)
		}
	}
	v, err := d.QueryVector("forecast for Paris?")
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(v[0]-0.6) > 1e-7 || math.Abs(v[1]-0.8) > 1e-7 {
		t.Errorf("QueryVector = %v, want [0.6 0.8]", v)
	}
	batch, err := d.SearchBatch([]string{"forecast for Paris?", "only text"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if batch[0][0].ID != "t" || batch[1][0].ID != "t" {
		t.Errorf("SearchBatch = %v", batch)
	}
}

func TestDenseErrors(t *testing.T) {
	enc := &tableEncoder{dim: 3}
	if _, err := NewDenseFromVectors(enc, []string{"a", "b"}, [][]float32{{1, 0, 0}}); err == nil {
		t.Error("2 ids and 1 vector: want an error")
	}
	if _, err := NewDenseFromVectors(enc, []string{"a"}, [][]float32{{1, 0}}); err == nil || !strings.Contains(err.Error(), `"a"`) {
		t.Errorf("short vector: error %v, want one naming document a", err)
	}
	d, err := NewDenseFromVectors(enc, []string{"a"}, [][]float32{{1, 0, 0}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.SearchVector([]float32{1, 0}, 1); err == nil {
		t.Error("query of wrong dimension: want an error")
	}
	if _, err := d.Search("unknown", 1); err == nil {
		t.Error("encoder failure: want an error")
	}
	if _, err := NewDense(nil, nil, DenseOptions{}); err == nil {
		t.Error("nil encoder: want an error")
	}
}

func benchDense(b *testing.B) (*Dense, [][]float32) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n, dim = 5000, 384
	unit := func() []float32 {
		v := make([]float32, dim)
		var s float64
		for j := range v {
			v[j] = float32(rng.NormFloat64())
			s += float64(v[j]) * float64(v[j])
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(s))
		}
		return v
	}
	docs := make([][]float32, n)
	ids := make([]string, n)
	for i := range docs {
		docs[i], ids[i] = unit(), fmt.Sprintf("d%d", i)
	}
	d, err := NewDenseFromVectors(&tableEncoder{dim: dim}, ids, docs)
	if err != nil {
		b.Fatal(err)
	}
	qs := make([][]float32, 256)
	for i := range qs {
		qs[i] = unit()
	}
	return d, qs
}

// processCPU is the CPU time (user + system) this process has used: on a shared machine it
// measures the work done, where wall time also counts waiting for a core.
func processCPU() time.Duration {
	d, _ := cputime.Process() // getrusage(RUSAGE_SELF) cannot fail on Linux
	return d
}

// BenchmarkDenseTop10 is exact top-10 over 5,000 tools × 384 dims, one query per op.
func BenchmarkDenseTop10(b *testing.B) {
	d, qs := benchDense(b)
	cpu := processCPU()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := d.SearchVector(qs[i%len(qs)], 10); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((processCPU()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// BenchmarkDenseTop10Batch256 ranks 256 queries per op (SearchVectors, GOMAXPROCS workers).
func BenchmarkDenseTop10Batch256(b *testing.B) {
	d, qs := benchDense(b)
	cpu := processCPU()
	b.ResetTimer()
	for b.Loop() {
		if _, err := d.SearchVectors(qs, 10); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(qs)), "ns/query")
	b.ReportMetric(float64((processCPU()-cpu).Nanoseconds())/float64(b.N*len(qs)), "cpu-ns/query")
}

// BenchmarkSearchBatchVsNumpy ranks batches of 64 random unit queries against N random unit
// documents (d = 384), top 10: Go's blocked SearchVectors against numpy (OpenBLAS sgemm) on the
// same shapes and the same number of threads (GOMAXPROCS = OPENBLAS_NUM_THREADS), in one run.
// The numpy row reports the matrix product alone (matmul-ms/query) and with argpartition top-k
// (ms/query), 5 batches per run; both sides also report the process CPU time of the matrix
// product (Go: of the whole search), steadier than wall time on a loaded machine; run the go rows with -benchtime Nx and the numpy row with 1x.
// N = 100,000, and 1,000,000 with RATED_BENCH_1M=1 (1.5 GB of vectors on each side).
func BenchmarkSearchBatchVsNumpy(b *testing.B) {
	const dim, batch, k = 384, 64, 10
	sizes := []int{100_000}
	if os.Getenv("RATED_BENCH_1M") == "1" {
		sizes = append(sizes, 1_000_000)
	}
	threads := runtime.GOMAXPROCS(0)
	for _, n := range sizes {
		b.Run(fmt.Sprintf("n%d/go", n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(5, uint64(n)))
			docs := make([][]float32, n)
			flat := make([]float32, n*dim)
			for i := range docs {
				docs[i] = randomUnit(rng, flat[i*dim:(i+1)*dim])
			}
			d := newTestDense(b, docs, dim)
			flat, docs = nil, nil
			qs := make([][]float32, batch)
			for i := range qs {
				qs[i] = randomUnit(rng, make([]float32, dim))
			}
			if _, err := d.SearchVectors(qs, k); err != nil { // warm-up
				b.Fatal(err)
			}
			b.ResetTimer()
			cpu0 := processCPU()
			for b.Loop() {
				if _, err := d.SearchVectors(qs, k); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e6/float64(b.N*batch), "ms/query")
			b.ReportMetric((processCPU()-cpu0).Seconds()*1e3/float64(b.N*batch), "cpu-ms/query")
		})
		b.Run(fmt.Sprintf("n%d/numpy", n), func(b *testing.B) {
			python := filepath.Join(testassets.Dir(b), "venv", "bin", "python")
			if _, err := os.Stat(python); err != nil {
				b.Skip("no reference venv")
			}
			body, _ := json.Marshal(map[string]int{"n": n, "dim": dim, "batch": batch, "k": k, "rounds": 5})
			var matmul, search, matmulCPU float64
			for b.Loop() {
				cmd := exec.Command(python, "testdata/search_numpy.py")
				cmd.Env = append(os.Environ(), fmt.Sprintf("OPENBLAS_NUM_THREADS=%d", threads), fmt.Sprintf("OMP_NUM_THREADS=%d", threads))
				cmd.Stdin = bytes.NewReader(body)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					b.Fatalf("numpy: %v\n%s", err, stderr.String())
				}
				var res struct {
					Matmul float64 `json:"matmul_ms_per_query"`
					Search float64 `json:"search_ms_per_query"`
					CPU    float64 `json:"matmul_cpu_ms_per_query"`
				}
				if err := json.Unmarshal(out, &res); err != nil {
					b.Fatal(err)
				}
				matmul += res.Matmul
				search += res.Search
				matmulCPU += res.CPU
			}
			b.ReportMetric(matmulCPU/float64(b.N), "matmul-cpu-ms/query")
			b.ReportMetric(matmul/float64(b.N), "matmul-ms/query")
			b.ReportMetric(search/float64(b.N), "ms/query")
		})
	}
}

func randomUnit(rng *rand.Rand, v []float32) []float32 {
	norm := 0.0
	for j := range v {
		x := rng.NormFloat64()
		v[j] = float32(x)
		norm += x * x
	}
	inv := float32(1 / math.Sqrt(norm))
	for j := range v {
		v[j] *= inv
	}
	return v
}

// TestBatchedCopiesTieInCorpusOrder: copies of one random (not quarter-integer) vector across
// block boundaries and the corpus tail score alike in a batched search, so they rank in corpus
// order (the kernel remainders summed in another order: copies at positions 510, 511 and the
// tail ranked after later copies).
func TestBatchedCopiesTieInCorpusOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n, dim = 1100, 384
	dup := make([]float32, dim)
	for j := range dup {
		dup[j] = float32(rng.NormFloat64())
	}
	docs := make([][]float32, n)
	var copies []int
	for i := range docs {
		if i%5 == 0 || i >= n-6 || i == 510 || i == 511 {
			docs[i], copies = dup, append(copies, i)
			continue
		}
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(rng.NormFloat64()) * 0.01
		}
		docs[i] = v
	}
	d := newTestDense(t, docs, dim)
	queries := make([][]float32, 8)
	for i := range queries {
		queries[i] = append([]float32(nil), dup...)
		queries[i][i] += 0.5
	}
	batch, err := d.SearchVectors(queries, len(copies))
	if err != nil {
		t.Fatal(err)
	}
	for qi, got := range batch {
		for r, c := range got {
			if c.Index != copies[r] {
				t.Fatalf("query %d rank %d: document %d (score %v), want copy %d in corpus order", qi, r, c.Index, c.Score, copies[r])
			}
		}
	}
}
