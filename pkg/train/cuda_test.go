package train

import (
	"math"
	"testing"

	"github.com/rated-dev/rated/pkg/encode"
)

// TestCUDAEmbeddingsMatchCPU: with RATED_TRAIN_DEVICE=cuda (scripts/gpu-check.sh, on a GPU with
// the GPU build as RATED_TRAIN_LIB), pkg/encode's CUDA session of all-minilm-l6-v2 gives the
// same vectors as its CPU session of the same library (cosine >= 0.9999 per vector); the CPU
// path itself is checked against Python onnxruntime by pkg/encode's reference test. Elsewhere it
// is skipped: it needs a GPU.
func TestCUDAEmbeddingsMatchCPU(t *testing.T) {
	if testDevice() != encode.DeviceCUDA {
		t.Skip("RATED_TRAIN_DEVICE is not cuda: needs a GPU (scripts/gpu-check.sh)")
	}
	_, ert := testRuntime(t)
	model := minilm(t)
	var texts []string
	for _, ex := range fixedExamples {
		texts = append(texts, ex.Query, ex.Positive)
		texts = append(texts, ex.Negatives...)
	}
	texts = append(texts, "", "a much longer text about booking flights, hotels and rental cars for a business trip to Lisbon next week, with a budget")
	cpu, gpu := embedDocs(t, ert, model, encode.DeviceCPU, texts), embedDocs(t, ert, model, encode.DeviceCUDA, texts)
	worst := 1.0
	for i := range texts {
		var dot, na, nb float64
		for j := range cpu[i] {
			dot += float64(cpu[i][j]) * float64(gpu[i][j])
			na += float64(cpu[i][j]) * float64(cpu[i][j])
			nb += float64(gpu[i][j]) * float64(gpu[i][j])
		}
		c := dot / math.Sqrt(na*nb)
		worst = min(worst, c)
		if c < 0.9999 {
			t.Errorf("text %d %q: cosine %.6f between CUDA and CPU, want >= 0.9999", i, texts[i], c)
		}
	}
	t.Logf("%d texts, worst cosine CUDA vs CPU %.7f", len(texts), worst)
}
