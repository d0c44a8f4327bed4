package encode

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/rated-dev/rated/internal/testassets"
)

// Installed model folders (scripts/setup.d/20-models.sh) and their pooling.
var referenceModels = []struct {
	name    string
	pooling string
}{
	{"bge-small-en-v1.5", PoolingCLS},
	{"all-minilm-l6-v2", PoolingMean},
}

var (
	testRuntimeOnce sync.Once
	testRuntime     *Runtime
)

// sharedRuntime returns the process's one Runtime over the installed library.
func sharedRuntime(t testing.TB) *Runtime {
	t.Helper()
	lib := testassets.ORTLibrary(t)
	testRuntimeOnce.Do(func() { testRuntime = NewRuntime(lib) })
	if err := testRuntime.Init(); err != nil {
		t.Fatal(err)
	}
	return testRuntime
}

// unusedTokenizer fails if called: token-level tests feed ids directly.
type unusedTokenizer struct{}

func (unusedTokenizer) EncodeBatch([]string, int) (TokenBatch, error) {
	panic("token-level test called the tokenizer")
}

func noTokenizer(string) (Tokenizer, error) { return unusedTokenizer{}, nil }

// randomSequences returns n BERT-shaped sequences ([CLS] ... [SEP]) of varied lengths from
// 2 (an empty text) to maxLen, with random word-piece ids and, for some, a second segment.
func randomSequences(rng *rand.Rand, n, maxLen int) [][2][]int64 {
	lengths := []int{2, 3, maxLen}
	for len(lengths) < n {
		lengths = append(lengths, 2+rng.IntN(70))
	}
	out := make([][2][]int64, n)
	for i, l := range lengths {
		ids := make([]int64, l)
		types := make([]int64, l)
		ids[0], ids[l-1] = 101, 102
		for j := 1; j < l-1; j++ {
			ids[j] = int64(1996 + rng.IntN(28000))
		}
		if i%3 == 1 && l > 6 { // a pair: [CLS] a [SEP] b [SEP]
			cut := l / 2
			ids[cut] = 102
			for j := cut + 1; j < l; j++ {
				types[j] = 1
			}
		}
		out[i] = [2][]int64{ids, types}
	}
	return out
}

// padBatch builds a dynamically padded batch from sequences (pad id 0, mask 0).
func padBatch(seqs [][2][]int64) TokenBatch {
	seqLen := 0
	for _, s := range seqs {
		seqLen = max(seqLen, len(s[0]))
	}
	b := TokenBatch{BatchSize: len(seqs), SeqLen: seqLen}
	b.InputIDs = make([]int64, len(seqs)*seqLen)
	b.AttentionMask = make([]int64, len(seqs)*seqLen)
	b.TokenTypeIDs = make([]int64, len(seqs)*seqLen)
	for i, s := range seqs {
		copy(b.InputIDs[i*seqLen:], s[0])
		copy(b.TokenTypeIDs[i*seqLen:], s[1])
		for j := range s[0] {
			b.AttentionMask[i*seqLen+j] = 1
		}
	}
	return b
}

func cosine(a []float32, b []float64) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * b[i]
		na += float64(a[i]) * float64(a[i])
		nb += b[i] * b[i]
	}
	return dot / math.Sqrt(na*nb)
}

// TestEmbeddingsMatchPythonOnnxruntime runs the same model.onnx on the same token ids in Go
// (batched, dynamically padded, pooled and normalised by pkg/encode) and in Python onnxruntime
// (one unpadded sequence at a time, pooled and normalised with numpy): every vector must agree to
// cosine >= 0.9999 and be unit length.
func TestEmbeddingsMatchPythonOnnxruntime(t *testing.T) {
	rt := sharedRuntime(t)
	python := testassets.Python(t)
	for _, rm := range referenceModels {
		t.Run(rm.name, func(t *testing.T) {
			dir := testassets.Model(t, rm.name)
			m, err := Open(dir, Options{Runtime: rt, Threads: 1, LoadTokenizer: noTokenizer})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if got := m.Config().Pooling; got != rm.pooling {
				t.Fatalf("%s: pooling %s, want %s", dir, got, rm.pooling)
			}
			rng := rand.New(rand.NewPCG(7, uint64(len(rm.name))))
			seqs := randomSequences(rng, 40, m.Config().MaxLength)

			req := map[string]any{
				"model": filepath.Join(dir, "model.onnx"), "pooling": rm.pooling,
				"normalize": true, "threads": 1,
			}
			var list []map[string][]int64
			for _, s := range seqs {
				list = append(list, map[string][]int64{"input_ids": s[0], "token_type_ids": s[1]})
			}
			req["sequences"] = list
			body, _ := json.Marshal(req)
			cmd := exec.Command(python, "testdata/ort_reference.py")
			cmd.Stdin = bytes.NewReader(body)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			outJSON, err := cmd.Output()
			if err != nil {
				t.Fatalf("python reference: %v\n%s", err, stderr.String())
			}
			var ref struct {
				Version string      `json:"version"`
				Vectors [][]float64 `json:"vectors"`
			}
			if err := json.Unmarshal(outJSON, &ref); err != nil {
				t.Fatal(err)
			}

			// Go: batches of 7 in input order, so short sequences are padded next to long ones.
			var got [][]float32
			for start := 0; start < len(seqs); start += 7 {
				b := padBatch(seqs[start:min(start+7, len(seqs))])
				vecs, err := m.embedTokens(m.towers[TowerDoc], b)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, vecs...)
			}
			worst := 1.0
			for i := range seqs {
				if len(got[i]) != 384 || len(ref.Vectors[i]) != 384 {
					t.Fatalf("sequence %d: dims %d (Go) and %d (Python), want 384", i, len(got[i]), len(ref.Vectors[i]))
				}
				c := cosine(got[i], ref.Vectors[i])
				worst = min(worst, c)
				if c < 0.9999 {
					t.Errorf("sequence %d (length %d): cosine %.6f with Python onnxruntime %s, want >= 0.9999", i, len(seqs[i][0]), c, ref.Version)
				}
				var n float64
				for _, x := range got[i] {
					n += float64(x) * float64(x)
				}
				if math.Abs(n-1) > 1e-5 {
					t.Errorf("sequence %d: squared norm %.7f, want 1", i, n)
				}
			}
			t.Logf("%s: %d sequences, worst cosine %.7f vs Python onnxruntime %s", rm.name, len(seqs), worst, ref.Version)
		})
	}
}
