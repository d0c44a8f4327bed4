package train

import (
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/rated-dev/rated/pkg/train/internal/ort"
)

// Runtime is an opened ONNX Runtime library that has the training API.
type Runtime struct {
	ort *ort.Runtime
}

// OpenRuntime loads the training-enabled ONNX Runtime library at path (see
// scripts/setup.d/50-training.sh) and fails when it has no training API.
func OpenRuntime(path string) (*Runtime, error) {
	r, err := ort.Open(path)
	if err != nil {
		return nil, err
	}
	if !r.TrainingSupported() {
		r.Close()
		return nil, fmt.Errorf("onnxruntime %s (%s) has no training API compiled in: install the training library with `rated setup training`", path, r.Version())
	}
	return &Runtime{ort: r}, nil
}

// Version is the library's version.
func (r *Runtime) Version() string { return r.ort.Version() }

// Close releases the runtime's environment.
func (r *Runtime) Close() { r.ort.Close() }

// SessionOptions configure a training session.
type SessionOptions struct {
	// Threads is ONNX Runtime's intra-op thread count (0: all cores).
	Threads int
	// Deterministic asks for deterministic kernels.
	Deterministic bool
	// Device is "cpu" (default) or "cuda": the CUDA execution provider of a GPU build of the
	// library (scripts/setup.d/55-training-gpu.sh); with a CPU build it is an error wrapping
	// ErrNoCUDA that names the library.
	Device string
	// CUDADevice is the GPU ordinal for Device "cuda".
	CUDADevice int
	// TF32 lets CUDA matrix products use TensorFloat-32 (faster, about 1e-3 relative error); off,
	// they are plain fp32.
	TF32 bool
}

// ErrNoCUDA is wrapped by OpenSession's error when Device is "cuda" and the library has no CUDA
// execution provider.
var ErrNoCUDA = ort.ErrNoCUDA

// Session is a training session over a set of artifacts and a checkpoint state.
type Session struct {
	rt  *Runtime
	art *Artifacts
	ck  *ort.Checkpoint
	ts  *ort.TrainingSession
	// pending is true between TrainStep and Apply/Discard.
	pending bool
}

// ErrNonFinite is returned (wrapped) by TrainStep when the loss is NaN or infinite.
var ErrNonFinite = errors.New("loss is not finite")

// OpenSession loads a checkpoint (the artifacts' initial one when checkpoint is "") and creates a
// training session over the artifacts' training, eval and optimizer models.
func (r *Runtime) OpenSession(art *Artifacts, checkpoint string, o SessionOptions) (*Session, error) {
	if checkpoint == "" {
		checkpoint = art.path("checkpoint")
	}
	ck, err := r.ort.LoadCheckpoint(checkpoint)
	if err != nil {
		return nil, err
	}
	ts, err := r.ort.NewTrainingSession(ck, art.path("training_model.onnx"), art.path("eval_model.onnx"), art.path("optimizer_model.onnx"),
		ort.Options{Threads: o.Threads, Deterministic: o.Deterministic, Device: o.Device, CUDADevice: o.CUDADevice, TF32: o.TF32})
	if err != nil {
		ck.Close()
		return nil, err
	}
	return &Session{rt: r, art: art, ck: ck, ts: ts}, nil
}

// Artifacts returns the session's artifact description.
func (s *Session) Artifacts() *Artifacts { return s.art }

func (s *Session) tensors(b *Batch) ([]*ort.Tensor, error) {
	art := s.art
	qRows, dRows := art.Rows()
	type want struct {
		rows  *Rows
		count int
	}
	var towers map[string]want
	if art.Towers == TowersShared {
		towers = map[string]want{"": {&b.Queries, qRows + dRows}}
	} else {
		towers = map[string]want{"q.": {&b.Queries, qRows}, "d.": {&b.Docs, dRows}}
	}
	for prefix, w := range towers {
		if w.rows.Count != w.count || w.rows.Seq != art.Seq || len(w.rows.InputIDs) != w.count*art.Seq {
			return nil, fmt.Errorf("batch: tower %q has %d rows of %d tokens, the graph takes %d of %d", prefix, w.rows.Count, w.rows.Seq, w.count, art.Seq)
		}
	}
	var out []*ort.Tensor
	closeAll := func() {
		for _, t := range out {
			t.Close()
		}
	}
	for _, name := range art.Inputs {
		var data []int64
		var shape []int64
		if name == "labels" {
			data = make([]int64, art.Batch)
			for i := range data {
				data[i] = int64(i)
			}
			shape = []int64{int64(art.Batch)}
		} else {
			prefix, input := "", name
			if art.Towers == TowersDual {
				if len(name) < 2 {
					closeAll()
					return nil, fmt.Errorf("batch: unexpected graph input %q", name)
				}
				prefix, input = name[:2], name[2:]
			}
			w, ok := towers[prefix]
			if !ok {
				closeAll()
				return nil, fmt.Errorf("batch: unexpected graph input %q", name)
			}
			switch input {
			case "input_ids":
				data = w.rows.InputIDs
			case "attention_mask":
				data = w.rows.AttentionMask
			case "token_type_ids":
				data = w.rows.TokenTypeIDs
			default:
				closeAll()
				return nil, fmt.Errorf("batch: unexpected graph input %q", name)
			}
			shape = []int64{int64(w.count), int64(art.Seq)}
		}
		t, err := s.rt.ort.NewInt64Tensor(data, shape...)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("batch input %s: %w", name, err)
		}
		out = append(out, t)
	}
	return out, nil
}

func (s *Session) run(b *Batch, train bool) (float32, error) {
	in, err := s.tensors(b)
	if err != nil {
		return 0, err
	}
	defer func() {
		for _, t := range in {
			t.Close()
		}
	}()
	if train {
		return s.ts.TrainStep(in)
	}
	return s.ts.EvalStep(in)
}

// TrainStep runs forward and backward on a batch and returns the loss; the gradients wait for
// Apply (or Discard). A NaN or infinite loss is returned with ErrNonFinite and nothing is kept.
func (s *Session) TrainStep(b *Batch) (float32, error) {
	if s.pending {
		return 0, errors.New("train step: previous gradients neither applied nor discarded")
	}
	loss, err := s.run(b, true)
	if err != nil {
		return 0, err
	}
	s.pending = true
	if math.IsNaN(float64(loss)) || math.IsInf(float64(loss), 0) {
		if err := s.Discard(); err != nil {
			return loss, err
		}
		return loss, fmt.Errorf("%w (%v)", ErrNonFinite, loss)
	}
	return loss, nil
}

// Apply takes one optimizer step (AdamW) with learning rate lr on the pending gradients and
// clears them.
func (s *Session) Apply(lr float64) error {
	if !s.pending {
		return errors.New("apply: no pending gradients")
	}
	if err := s.ts.SetLearningRate(float32(lr)); err != nil {
		return err
	}
	if err := s.ts.OptimizerStep(); err != nil {
		return err
	}
	s.pending = false
	return s.ts.LazyResetGrad()
}

// Discard drops the pending gradients.
func (s *Session) Discard() error {
	s.pending = false
	return s.ts.LazyResetGrad()
}

// EvalLoss runs the eval graph (forward only) on a batch.
func (s *Session) EvalLoss(b *Batch) (float32, error) { return s.run(b, false) }

// LearningRate is the optimizer's current learning rate.
func (s *Session) LearningRate() (float32, error) { return s.ts.LearningRate() }

// Parameters returns the current values of the trainable parameters by name.
func (s *Session) Parameters() (map[string][]float32, error) {
	out := make(map[string][]float32, len(s.art.Parameters))
	for _, name := range s.art.Parameters {
		v, err := s.ck.Parameter(name)
		if err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, nil
}

// SaveCheckpoint writes parameters (and the optimizer state when withOptimizer) with the step
// count as property "step", atomically (temporary file, then rename).
func (s *Session) SaveCheckpoint(path string, step int, withOptimizer bool) error {
	if err := s.ck.SetInt("step", int64(step)); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := s.ck.Save(tmp, withOptimizer); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("save checkpoint %s: %w", path, err)
	}
	return nil
}

// CheckpointStep reads the "step" property (0 when absent, as in the initial checkpoint).
func (s *Session) CheckpointStep() int {
	v, err := s.ck.Int("step")
	if err != nil {
		return 0
	}
	return int(v)
}

// Close releases the session and its checkpoint state.
func (s *Session) Close() {
	s.ts.Close()
	s.ck.Close()
}
