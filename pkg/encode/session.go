package encode

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	ort "github.com/yalue/onnxruntime_go"
)

// Input names an ONNX BERT encoder may take.
const (
	inputIDs      = "input_ids"
	attentionMask = "attention_mask"
	tokenTypeIDs  = "token_type_ids"
)

// Devices for Options.Device.
const (
	DeviceCPU  = "cpu"
	DeviceCUDA = "cuda"
)

// session is one ONNX model loaded into ONNX Runtime, with its validated input/output layout.
type session struct {
	path       string
	sha256     string
	sess       *ort.DynamicAdvancedSession
	inputs     []string // in the order passed to Run
	output     string
	outputRank int // 3: [batch, seq, dim] token states; 2: [batch, dim] one vector per text
	dim        int
	// positions is the number of rows of the model's position-embedding table: the longest
	// sequence it accepts (0: unknown).
	positions int
}

// openSession loads the ONNX file at path and checks that it is a text encoder that rated can
// drive: int64 inputs among input_ids/attention_mask/token_type_ids (input_ids required), a
// float32 output of rank 3 (token states, pooled by cls or mean) or rank 2 (already pooled), whose
// last dimension matches wantDim when both are known. Every error names the file.
func openSession(rt *Runtime, path, outputName, pooling string, wantDim int, opts Options) (*session, error) {
	if err := rt.Init(); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("model file %s not found", path)
		}
		return nil, fmt.Errorf("model file %s: %w", path, err)
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("model file %s is empty", path)
	}
	sum, err := rt.digests.sum(path, data)
	if err != nil {
		return nil, err
	}
	inInfo, outInfo, err := onnxInputsOutputs(data)
	if err != nil {
		return nil, fmt.Errorf("model file %s is not a loadable ONNX model: %w", path, err)
	}
	s := &session{path: path, sha256: sum}
	if s.positions, err = positionLimit(data); err != nil {
		return nil, fmt.Errorf("model file %s is not a readable ONNX model: %w", path, err)
	}
	for _, in := range inInfo {
		switch in.Name {
		case inputIDs, attentionMask, tokenTypeIDs:
		default:
			return nil, fmt.Errorf("model file %s: unsupported input %q (a text encoder takes input_ids, attention_mask and optionally token_type_ids)", path, in.Name)
		}
		if in.DataType != ort.TensorElementDataTypeInt64 {
			return nil, fmt.Errorf("model file %s: input %q has type %s, want int64", path, in.Name, in.DataType)
		}
		if len(in.Dimensions) != 2 {
			return nil, fmt.Errorf("model file %s: input %q has shape %v, want [batch, sequence]", path, in.Name, in.Dimensions)
		}
		s.inputs = append(s.inputs, in.Name)
	}
	if !slices.Contains(s.inputs, inputIDs) {
		return nil, fmt.Errorf("model file %s: no input_ids input (inputs: %s)", path, strings.Join(s.inputs, ", "))
	}
	var names []string
	for _, o := range outInfo {
		names = append(names, o.Name)
	}
	var out *ort.InputOutputInfo
	switch {
	case outputName != "":
		i := slices.Index(names, outputName)
		if i < 0 {
			return nil, fmt.Errorf("model file %s: no output %q (outputs: %s)", path, outputName, strings.Join(names, ", "))
		}
		out = &outInfo[i]
	case slices.Contains(names, "last_hidden_state"):
		out = &outInfo[slices.Index(names, "last_hidden_state")]
	case len(outInfo) == 1:
		out = &outInfo[0]
	default:
		return nil, fmt.Errorf("model file %s: several outputs (%s): name one with output: in rated.yaml", path, strings.Join(names, ", "))
	}
	s.output = out.Name
	if out.DataType != ort.TensorElementDataTypeFloat {
		return nil, fmt.Errorf("model file %s: output %q has type %s, want float32", path, out.Name, out.DataType)
	}
	s.outputRank = len(out.Dimensions)
	switch {
	case s.outputRank == 3 && pooling == PoolingNone:
		return nil, fmt.Errorf("model file %s: output %q holds token states %v: set pooling to cls or mean", path, out.Name, out.Dimensions)
	case s.outputRank == 2 && pooling != PoolingNone:
		return nil, fmt.Errorf("model file %s: output %q is already one vector per text %v: set pooling to none", path, out.Name, out.Dimensions)
	case s.outputRank != 2 && s.outputRank != 3:
		return nil, fmt.Errorf("model file %s: output %q has shape %v, want [batch, sequence, dim] or [batch, dim]", path, out.Name, out.Dimensions)
	}
	modelDim := int(out.Dimensions[s.outputRank-1])
	switch {
	case modelDim > 0 && wantDim > 0 && modelDim != wantDim:
		return nil, fmt.Errorf("model file %s: output %q has dimension %d but rated.yaml says dim %d", path, out.Name, modelDim, wantDim)
	case modelDim > 0:
		s.dim = modelDim
	case wantDim > 0:
		s.dim = wantDim
	default:
		return nil, fmt.Errorf("model file %s: output %q has a dynamic last dimension: set dim in rated.yaml", path, out.Name)
	}

	so, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("model file %s: session options: %w", path, err)
	}
	defer so.Destroy()
	if opts.Threads > 0 {
		if err := so.SetIntraOpNumThreads(opts.Threads); err != nil {
			return nil, fmt.Errorf("model file %s: threads: %w", path, err)
		}
		if err := so.SetInterOpNumThreads(1); err != nil {
			return nil, fmt.Errorf("model file %s: threads: %w", path, err)
		}
	}
	switch opts.Device {
	case "", DeviceCPU:
	case DeviceCUDA:
		cuda, err := ort.NewCUDAProviderOptions()
		if err != nil {
			return nil, fmt.Errorf("CUDA execution provider unavailable in %s: %w", rt.LibraryPath(), err)
		}
		defer cuda.Destroy()
		if err := cuda.Update(map[string]string{"device_id": fmt.Sprint(opts.CUDADevice)}); err != nil {
			return nil, fmt.Errorf("CUDA execution provider unavailable in %s (device %d): %w", rt.LibraryPath(), opts.CUDADevice, err)
		}
		if err := so.AppendExecutionProviderCUDA(cuda); err != nil {
			return nil, fmt.Errorf("CUDA execution provider unavailable in %s: %w", rt.LibraryPath(), err)
		}
	default:
		return nil, fmt.Errorf("device %q: want cpu or cuda", opts.Device)
	}
	sess, err := ort.NewDynamicAdvancedSessionWithONNXData(data, s.inputs, []string{s.output}, so)
	if err != nil {
		return nil, fmt.Errorf("model file %s is not a loadable ONNX model (creating the session): %w", path, err)
	}
	s.sess = sess
	return s, nil
}

// run feeds a token batch through the model and returns the raw output: [batch, seq, dim] token
// states (rank 3) or [batch, dim] vectors (rank 2), row-major.
func (s *session) run(b TokenBatch) ([]float32, error) {
	shape := ort.NewShape(int64(b.BatchSize), int64(b.SeqLen))
	inputs := make([]ort.Value, 0, len(s.inputs))
	defer func() {
		for _, v := range inputs {
			v.Destroy()
		}
	}()
	for _, name := range s.inputs {
		var data []int64
		switch name {
		case inputIDs:
			data = b.InputIDs
		case attentionMask:
			data = b.AttentionMask
		case tokenTypeIDs:
			data = b.TokenTypeIDs
			if data == nil {
				data = make([]int64, b.BatchSize*b.SeqLen)
			}
		}
		t, err := ort.NewTensor(shape, data)
		if err != nil {
			return nil, fmt.Errorf("model file %s: input %s: %w", s.path, name, err)
		}
		inputs = append(inputs, t)
	}
	outShape := ort.NewShape(int64(b.BatchSize), int64(b.SeqLen), int64(s.dim))
	if s.outputRank == 2 {
		outShape = ort.NewShape(int64(b.BatchSize), int64(s.dim))
	}
	out, err := ort.NewEmptyTensor[float32](outShape)
	if err != nil {
		return nil, fmt.Errorf("model file %s: output tensor: %w", s.path, err)
	}
	defer out.Destroy()
	if err := s.sess.Run(inputs, []ort.Value{out}); err != nil {
		return nil, fmt.Errorf("model file %s: run (batch %d, length %d): %w", s.path, b.BatchSize, b.SeqLen, err)
	}
	return slices.Clone(out.GetData()), nil
}

func (s *session) close() error {
	if s == nil || s.sess == nil {
		return nil
	}
	err := s.sess.Destroy()
	s.sess = nil
	return err
}
