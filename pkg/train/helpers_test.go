package train

import (
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/rated-dev/rated/internal/testassets"
	"github.com/rated-dev/rated/pkg/encode"
	"github.com/rated-dev/rated/pkg/encode/tokenizer"
)

// The tests run the real all-MiniLM-L6-v2 through training artifacts that
// scripts/setup.d/50-training.sh builds at small shapes (B=4, N=1, seq 16; dual: B=2), and at
// B=8, N=1, seq 32 for the fine-tune on the Syn fixture.

// trainingLibrary is the training library the tests run on: $RATED_TRAIN_LIB when set (e.g. the
// GPU build, for scripts/gpu-check.sh), else the CPU build of 50-training.sh.
func trainingLibrary(t testing.TB) string {
	t.Helper()
	if lib := os.Getenv("RATED_TRAIN_LIB"); lib != "" {
		return testassets.Need(t, "training library $RATED_TRAIN_LIB", lib)
	}
	return testassets.Need(t, "training-enabled ONNX Runtime library", filepath.Join(testassets.Dir(t), "lib", "training", "libonnxruntime.so"))
}

// testDevice is where the session tests run their steps: $RATED_TRAIN_DEVICE ("cuda" on a GPU
// with the GPU build, scripts/gpu-check.sh), else "cpu".
func testDevice() string {
	if d := os.Getenv("RATED_TRAIN_DEVICE"); d != "" {
		return d
	}
	return encode.DeviceCPU
}

// lossTolerance is the step-0 agreement required between the training graph and the Go
// reference: 1e-4 on CPU; 1e-3 on CUDA, whose fp32 kernels (TF32 off) sum in other orders.
func lossTolerance() float64 {
	if testDevice() == encode.DeviceCUDA {
		return 1e-3
	}
	return 1e-4
}

var (
	runtimeOnce sync.Once
	runtimeVal  *Runtime
	runtimeErr  error
	encodeRT    *encode.Runtime
)

// testRuntime opens the training library once per test binary (ONNX Runtime keeps one
// environment per process); pkg/encode runs on the same library file.
func testRuntime(t testing.TB) (*Runtime, *encode.Runtime) {
	t.Helper()
	lib := trainingLibrary(t)
	runtimeOnce.Do(func() {
		encodeRT = encode.NewRuntime(lib)
		runtimeVal, runtimeErr = OpenRuntime(lib)
	})
	if runtimeErr != nil {
		t.Fatal(runtimeErr)
	}
	return runtimeVal, encodeRT
}

func testArtifacts(t testing.TB, name string) *Artifacts {
	t.Helper()
	dir := testassets.Need(t, "training artifacts "+name, filepath.Join(testassets.Dir(t), "train", name))
	a, err := LoadArtifacts(dir)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func minilm(t testing.TB) string {
	t.Helper()
	return testassets.Model(t, "all-minilm-l6-v2")
}

// fixedExamples are short (under 16 tokens with specials), so neither the training rows nor
// pkg/encode truncate them. The pairs are deliberately crossed (each query's "positive" is
// another query's tool, and its own tool is the hard negative), so the frozen model's loss is
// large and there is something to learn.
var fixedExamples = []Example{
	{QueryID: "q1", Query: "send a message to a slack channel", PositiveID: "weather", Positive: "OpenWeather: current weather by city",
		NegativeIDs: []string{"slack"}, Negatives: []string{"Slack: post messages to channels"}},
	{QueryID: "q2", Query: "what is the weather in paris", PositiveID: "github", Positive: "GitHub: open and comment on issues",
		NegativeIDs: []string{"maps"}, Negatives: []string{"Maps: directions between places"}},
	{QueryID: "q3", Query: "create a github issue", PositiveID: "fx", Positive: "Currency converter: exchange rates",
		NegativeIDs: []string{"jira"}, Negatives: []string{"Jira: track project tasks"}},
	{QueryID: "q4", Query: "convert euros to dollars", PositiveID: "slack", Positive: "Slack: post messages to channels",
		NegativeIDs: []string{"stocks"}, Negatives: []string{"Stocks: share prices and quotes"}},
}

func loadTokenizer(t testing.TB, modelDir string) *tokenizer.Tokenizer {
	t.Helper()
	tok, err := tokenizer.Load(filepath.Join(modelDir, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func assemble(t testing.TB, art *Artifacts, modelDir string, examples []Example) *Batch {
	t.Helper()
	cfg, err := encode.LoadConfig(modelDir)
	if err != nil {
		t.Fatal(err)
	}
	asm := &Assembler{Artifacts: art, Tokenizer: loadTokenizer(t, modelDir), QueryPrefix: cfg.QueryPrefix, DocPrefix: cfg.DocPrefix}
	b, err := asm.Assemble(examples)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// referenceInfoNCE is the paper's loss written out from its definition, independent of the
// graph: for query i, -log softmax_j(q_i·d_j/τ)[i] over the documents (positives first, then the
// negatives), averaged over the queries. Embeddings are L2-normalised here.
func referenceInfoNCE(q, d [][]float32, tau float64) float64 {
	norm := func(v []float32) []float64 {
		var s float64
		for _, x := range v {
			s += float64(x) * float64(x)
		}
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = float64(x) / math.Sqrt(s)
		}
		return out
	}
	var total float64
	for i := range q {
		qi := norm(q[i])
		logits := make([]float64, len(d))
		maxL := math.Inf(-1)
		for j := range d {
			dj := norm(d[j])
			var dot float64
			for k := range qi {
				dot += qi[k] * dj[k]
			}
			logits[j] = dot / tau
			maxL = math.Max(maxL, logits[j])
		}
		var z float64
		for _, l := range logits {
			z += math.Exp(l - maxL)
		}
		total += -(logits[i] - maxL - math.Log(z))
	}
	return total / float64(len(q))
}

// openModel opens a model folder with pkg/encode on device ("" for the CPU), one thread, closed
// when the test ends.
func openModel(t *testing.T, ert *encode.Runtime, modelDir, device string) *encode.Model {
	t.Helper()
	m, err := encode.Open(modelDir, encode.Options{Runtime: ert, Threads: 1, Device: device, LoadTokenizer: LoadEncodeTokenizer})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// embedDocs embeds texts with the document tower of the model folder on device.
func embedDocs(t *testing.T, ert *encode.Runtime, modelDir, device string, texts []string) [][]float32 {
	t.Helper()
	v, err := openModel(t, ert, modelDir, device).EncodeDocs(texts)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// embedQueries embeds texts with the query tower of the model folder on device.
func embedQueries(t *testing.T, ert *encode.Runtime, modelDir, device string, texts []string) [][]float32 {
	t.Helper()
	v, err := openModel(t, ert, modelDir, device).EncodeQueries(texts)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// encodeLoss embeds the examples with pkg/encode from a model folder and returns the reference
// InfoNCE over them (documents: positives, then each query's negatives in order).
func encodeLoss(t *testing.T, ert *encode.Runtime, modelDir string, examples []Example, negatives int, tau float64) float64 {
	t.Helper()
	m := openModel(t, ert, modelDir, "")
	var queries, docs, negs []string
	for _, ex := range examples {
		queries = append(queries, ex.Query)
		docs = append(docs, ex.Positive)
		negs = append(negs, ex.Negatives[:negatives]...)
	}
	q, err := m.EncodeQueries(queries)
	if err != nil {
		t.Fatal(err)
	}
	d, err := m.EncodeDocs(append(docs, negs...))
	if err != nil {
		t.Fatal(err)
	}
	return referenceInfoNCE(q, d, tau)
}
