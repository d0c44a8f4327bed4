package ort

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
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

// TestCUDADevice: asking a CPU build for CUDA is an error naming the library and the GPU build;
// the GPU build of the same version (installed only with RATED_GPU=1, so skipped when absent)
// has the training API and lists the CUDA provider, and appending it either works (a GPU
// machine with CUDA 13 and cuDNN 9) or fails naming the CUDA libraries it needs.
func TestCUDADevice(t *testing.T) {
	cpuLib := testassets.Need(t, "training-enabled ONNX Runtime library", filepath.Join(testassets.Dir(t), "lib", "training", "libonnxruntime.so"))
	ck := testassets.Need(t, "training artifacts all-minilm-l6-v2-test", filepath.Join(testassets.Dir(t), "train", "all-minilm-l6-v2-test"))
	cpu, err := Open(cpuLib)
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	if has, err := cpu.HasProvider(CUDAProvider); err != nil || has {
		t.Errorf("%s lists %s: %v (err %v), want false", cpuLib, CUDAProvider, has, err)
	}
	if has, err := cpu.HasProvider("CPUExecutionProvider"); err != nil || !has {
		t.Errorf("%s lists CPUExecutionProvider: %v (err %v), want true", cpuLib, has, err)
	}
	state, err := cpu.LoadCheckpoint(filepath.Join(ck, "checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	defer state.Close()
	for _, c := range []struct {
		o    Options
		want []string
	}{
		{Options{Device: DeviceCUDA}, []string{cpuLib, "1.24.1", "no CUDA execution provider", "RATED_GPU=1 rated setup training", "linux-x86_64-gpu"}},
		{Options{Device: "tpu"}, []string{`device "tpu"`}},
	} {
		s, err := cpu.NewTrainingSession(state, filepath.Join(ck, "training_model.onnx"), "", "", c.o)
		if err == nil {
			s.Close()
			t.Errorf("%+v: no error", c.o)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: error %q does not say %q", c.o, err, w)
			}
		}
		if c.o.Device == DeviceCUDA && !errors.Is(err, ErrNoCUDA) {
			t.Errorf("error %v does not wrap ErrNoCUDA", err)
		}
	}
	if _, err := cpu.NewSession(filepath.Join(ck, "eval_model.onnx"), Options{Device: DeviceCUDA}); !errors.Is(err, ErrNoCUDA) {
		t.Errorf("inference session on %s with CUDA: error %v, want ErrNoCUDA", cpuLib, err)
	}

	gpuLib := filepath.Join(testassets.Dir(t), "lib", "training-gpu", "libonnxruntime.so")
	if _, err := os.Stat(gpuLib); err != nil {
		t.Skipf("GPU build not installed at %s (RATED_GPU=1 rated setup training); CPU-build checks passed", gpuLib)
	}
	gpu, err := Open(gpuLib)
	if err != nil {
		t.Fatal(err)
	}
	defer gpu.Close()
	if gpu.Version() != "1.24.1" || !gpu.TrainingSupported() {
		t.Errorf("%s: version %s, training API %v; want 1.24.1 with the training API", gpuLib, gpu.Version(), gpu.TrainingSupported())
	}
	if has, err := gpu.HasProvider(CUDAProvider); err != nil || !has {
		t.Fatalf("%s lists %s: %v (err %v), want true", gpuLib, CUDAProvider, has, err)
	}
	gstate, err := gpu.LoadCheckpoint(filepath.Join(ck, "checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	defer gstate.Close()
	s, err := gpu.NewTrainingSession(gstate, filepath.Join(ck, "training_model.onnx"), filepath.Join(ck, "eval_model.onnx"),
		filepath.Join(ck, "optimizer_model.onnx"), Options{Device: DeviceCUDA})
	if err == nil {
		s.Close()
		t.Logf("%s: a CUDA training session started on GPU 0", gpuLib)
		return
	}
	for _, w := range []string{gpuLib, "could not start", "libcudart.so.13"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
	t.Logf("no usable GPU here: %v", err)
}
