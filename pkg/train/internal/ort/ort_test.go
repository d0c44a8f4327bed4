package ort

import (
	"path/filepath"
	"testing"

	"github.com/rated-dev/rated/internal/testassets"
)

// TestTrainingAPIPresence records the library evidence of docs/FINETUNE.md: the Maven
// org.bytedeco 1.24.1 build serves OrtTrainingApi; the inference library of 10-onnxruntime.sh
// (npm onnxruntime-node 1.19.2) does not.
func TestTrainingAPIPresence(t *testing.T) {
	cases := []struct {
		what, path, version string
		training            bool
	}{
		{"training-enabled ONNX Runtime library", filepath.Join(testassets.Dir(t), "lib", "training", "libonnxruntime.so"), "1.24.1", true},
		{"ONNX Runtime shared library", filepath.Join(testassets.Dir(t), "lib", "libonnxruntime.so"), "", false},
	}
	for _, c := range cases {
		t.Run(c.what, func(t *testing.T) {
			r, err := Open(testassets.Need(t, c.what, c.path))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if (c.version != "" && r.Version() != c.version) || r.TrainingSupported() != c.training {
				t.Errorf("%s: version %s, training API %v; want %s, %v", c.path, r.Version(), r.TrainingSupported(), c.version, c.training)
			}
			if !c.training {
				if _, err := r.LoadCheckpoint("/nonexistent"); err == nil {
					t.Error("LoadCheckpoint without a training API: no error")
				}
			}
		})
	}
	if _, err := Open("/nonexistent/libonnxruntime.so"); err == nil {
		t.Error("opening a missing library: no error")
	}
}
