package train

import (
	"errors"
	"math"
	"path/filepath"
	"testing"

	"github.com/rated-dev/rated/internal/testassets"
)

// TestStepZeroLossEqualsReferenceInfoNCE: the training graph's loss before any update equals
// InfoNCE computed in Go from the inference model's embeddings (pkg/encode on the same folder).
func TestStepZeroLossEqualsReferenceInfoNCE(t *testing.T) {
	rt, ert := testRuntime(t)
	cases := []struct{ artifacts, model string }{
		{"all-minilm-l6-v2-test", "all-minilm-l6-v2"},      // mean pooling
		{"all-minilm-l6-v2-test-dual", "all-minilm-l6-v2"}, // two towers
		{"bge-small-en-v1.5-test", "bge-small-en-v1.5"},    // CLS pooling, query prefix
	}
	for _, c := range cases {
		t.Run(c.artifacts, func(t *testing.T) {
			model := testassets.Model(t, c.model)
			art := testArtifacts(t, c.artifacts)
			examples := fixedExamples[:art.Batch]
			want := encodeLoss(t, ert, model, examples, art.Negatives, art.Tau)
			s, err := rt.OpenSession(art, "", SessionOptions{Threads: 1, Device: testDevice()})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			b := assemble(t, art, model, examples)
			evalLoss, err := s.EvalLoss(b)
			if err != nil {
				t.Fatal(err)
			}
			trainLoss, err := s.TrainStep(b)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Discard(); err != nil {
				t.Fatal(err)
			}
			for what, got := range map[string]float32{"eval": evalLoss, "train": trainLoss} {
				if math.Abs(float64(got)-want) > lossTolerance() {
					t.Errorf("%s graph loss %.6f on %s, reference InfoNCE %.6f (tolerance %g)", what, got, testDevice(), want, lossTolerance())
				}
				t.Logf("%s graph loss %.6f on %s, reference InfoNCE %.6f, difference %.2g", what, got, testDevice(), want, math.Abs(float64(got)-want))
			}
			if want < 0.05 {
				t.Errorf("reference loss %.6f is too small for the check to mean anything", want)
			}
		})
	}
}

// TestLossFallsOnFixedBatch: repeated steps on one batch overfit it, so the loss falls at
// every step.
func TestLossFallsOnFixedBatch(t *testing.T) {
	rt, _ := testRuntime(t)
	model := minilm(t)
	art := testArtifacts(t, "all-minilm-l6-v2-test")
	s, err := rt.OpenSession(art, "", SessionOptions{Threads: 1, Device: testDevice()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b := assemble(t, art, model, fixedExamples[:art.Batch])
	var losses []float32
	for step := 0; step < 30; step++ {
		loss, err := s.TrainStep(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Apply(2e-5); err != nil {
			t.Fatal(err)
		}
		losses = append(losses, loss)
	}
	for i := 1; i < len(losses); i++ {
		if !(losses[i] < losses[i-1]) {
			t.Fatalf("loss rose at step %d: %v", i, losses)
		}
	}
	if losses[len(losses)-1] > losses[0]/2 {
		t.Errorf("loss fell only from %.4f to %.4f in 30 steps", losses[0], losses[len(losses)-1])
	}
	t.Logf("losses: %v", losses)
}

// TestExportedModelDiffersAndMatchesTrainedGraph: after a few steps the exported folder loads in
// pkg/encode, its embeddings differ from the source model's, and InfoNCE over them equals the
// eval graph's loss with the trained parameters (so the export carries exactly those values, in
// the right tower for dual encoders).
func TestExportedModelDiffersAndMatchesTrainedGraph(t *testing.T) {
	rt, ert := testRuntime(t)
	model := minilm(t)
	for _, name := range []string{"all-minilm-l6-v2-test", "all-minilm-l6-v2-test-dual"} {
		t.Run(name, func(t *testing.T) {
			art := testArtifacts(t, name)
			s, err := rt.OpenSession(art, "", SessionOptions{Threads: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			examples := fixedExamples[:art.Batch]
			b := assemble(t, art, model, examples)
			for step := 0; step < 5; step++ {
				if _, err := s.TrainStep(b); err != nil {
					t.Fatal(err)
				}
				if err := s.Apply(5e-5); err != nil {
					t.Fatal(err)
				}
			}
			evalLoss, err := s.EvalLoss(b)
			if err != nil {
				t.Fatal(err)
			}
			params, err := s.Parameters()
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "minilm-ft")
			if err := ExportModel(params, art, model, out, "minilm-ft"); err != nil {
				t.Fatal(err)
			}
			before := encodeLoss(t, ert, model, examples, art.Negatives, art.Tau)
			after := encodeLoss(t, ert, out, examples, art.Negatives, art.Tau)
			if math.Abs(after-float64(evalLoss)) > 1e-4 {
				t.Errorf("exported model's InfoNCE %.6f, trained eval graph %.6f", after, evalLoss)
			}
			if !(after < before-0.01) {
				t.Errorf("exported model's loss %.6f is not below the source's %.6f", after, before)
			}
			t.Logf("InfoNCE source %.5f, exported %.5f, eval graph %.5f", before, after, evalLoss)
		})
	}
}

// TestResumeGivesSameNextLoss: a checkpoint saved after k steps (with optimizer state), loaded in
// a fresh session, gives the same loss at step k+1 as the uninterrupted session.
func TestResumeGivesSameNextLoss(t *testing.T) {
	rt, _ := testRuntime(t)
	model := minilm(t)
	art := testArtifacts(t, "all-minilm-l6-v2-test")
	b := assemble(t, art, model, fixedExamples[:art.Batch])
	ckpt := filepath.Join(t.TempDir(), "last.ckpt")
	lr := func(step int) float64 { return Schedule{Peak: 5e-5, Warmup: 2, Total: 10}.LR(step) }

	a, err := rt.OpenSession(art, "", SessionOptions{Threads: 1, Deterministic: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	const k = 3
	for step := 0; step < k; step++ {
		if _, err := a.TrainStep(b); err != nil {
			t.Fatal(err)
		}
		if err := a.Apply(lr(step)); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.SaveCheckpoint(ckpt, k, true); err != nil {
		t.Fatal(err)
	}
	var uninterrupted []float32
	for step := k; step < k+2; step++ {
		loss, err := a.TrainStep(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Apply(lr(step)); err != nil {
			t.Fatal(err)
		}
		uninterrupted = append(uninterrupted, loss)
	}

	r, err := rt.OpenSession(art, ckpt, SessionOptions{Threads: 1, Deterministic: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := r.CheckpointStep(); got != k {
		t.Fatalf("checkpoint step property %d, want %d", got, k)
	}
	for i, step := 0, k; step < k+2; i, step = i+1, step+1 {
		loss, err := r.TrainStep(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Apply(lr(step)); err != nil {
			t.Fatal(err)
		}
		if math.Abs(float64(loss-uninterrupted[i])) > 1e-5 {
			t.Errorf("step %d: resumed loss %.7f, uninterrupted %.7f", step, loss, uninterrupted[i])
		}
	}
}

// TestNonFiniteLossIsRejected: an absurd learning rate blows the weights up; the step that sees
// the NaN/Inf loss reports ErrNonFinite and applies nothing.
func TestNonFiniteLossIsRejected(t *testing.T) {
	rt, _ := testRuntime(t)
	model := minilm(t)
	art := testArtifacts(t, "all-minilm-l6-v2-test")
	s, err := rt.OpenSession(art, "", SessionOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b := assemble(t, art, model, fixedExamples[:art.Batch])
	for step := 0; step < 10; step++ {
		_, err := s.TrainStep(b)
		if errors.Is(err, ErrNonFinite) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Apply(1e38); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("no non-finite loss after 10 steps at lr 1e38")
}
