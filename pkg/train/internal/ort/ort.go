// Package ort is a small cgo binding to the ONNX Runtime C API and its on-device training API
// (OrtTrainingApi), for pkg/train. The library is opened at run time with dlopen, so building needs
// only the two C headers kept here (ONNX Runtime 1.19's, C API version 19; MIT licence, Microsoft)
// and no ONNX Runtime to link against.
//
// It covers what github.com/yalue/onnxruntime_go v1.12.1 leaves out of the training API
// (SetLearningRate/GetLearningRate, RegisterLinearLRScheduler/SchedulerStep, EvalStep, checkpoint
// save with optimizer state and properties, GetParameter, ExportModelForInferencing) and the few
// inference calls pkg/train needs, over one OrtEnv per Runtime.
package ort

/*
#cgo CFLAGS: -O2
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include <string.h>
#include "ort_wrapper.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"
)

// Runtime is an opened ONNX Runtime library with its environment. It is safe for one goroutine at
// a time; Close releases the environment (the library itself stays mapped).
type Runtime struct {
	rt   *C.RtOrt
	path string
}

func cerr(what string, e *C.char) error {
	if e == nil {
		return nil
	}
	msg := C.GoString(e)
	C.free(unsafe.Pointer(e))
	return fmt.Errorf("%s: %s", what, msg)
}

// Open loads the shared library at path and creates an environment.
func Open(path string) (*Runtime, error) {
	rt := (*C.RtOrt)(C.calloc(1, C.size_t(unsafe.Sizeof(C.RtOrt{}))))
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	if err := cerr("open onnxruntime "+path, C.rt_load(cpath, rt)); err != nil {
		C.free(unsafe.Pointer(rt))
		return nil, err
	}
	return &Runtime{rt: rt, path: path}, nil
}

// Version is the library's version string, e.g. "1.24.1".
func (r *Runtime) Version() string { return C.GoString(&r.rt.version[0]) }

// Path is the library file the runtime was opened from.
func (r *Runtime) Path() string { return r.path }

// TrainingSupported reports whether the library has the training API compiled in.
func (r *Runtime) TrainingSupported() bool { return r.rt.tapi != nil }

// Close releases the environment.
func (r *Runtime) Close() {
	if r.rt != nil {
		C.rt_unload(r.rt)
		C.free(unsafe.Pointer(r.rt))
		r.rt = nil
	}
}

// SetSeed seeds the training API's random generators (dropout, if any).
func (r *Runtime) SetSeed(seed int64) error {
	return cerr("SetSeed", C.rt_set_seed(r.rt, C.int64_t(seed)))
}

// Execution devices of Options.Device.
const (
	DeviceCPU  = "cpu"
	DeviceCUDA = "cuda"
)

// CUDAProvider is ONNX Runtime's name of its CUDA execution provider.
const CUDAProvider = "CUDAExecutionProvider"

// ErrNoCUDA is returned (wrapped, with the library's path) when Options.Device is DeviceCUDA and
// the library was built without the CUDA execution provider.
var ErrNoCUDA = errors.New("no CUDA execution provider in this ONNX Runtime build")

// GPUHint says how to get a library that has both the training API and the CUDA provider.
const GPUHint = "install the GPU build (Maven org.bytedeco:onnxruntime:1.24.1-1.5.13:linux-x86_64-gpu, CUDA 13, cuDNN 9) " +
	"with RATED_GPU=1 rated setup training and pass the asset home's lib/training-gpu/libonnxruntime.so"

// Options are session options.
type Options struct {
	// Threads is the intra-op thread count (0: the library's default, all cores).
	Threads int
	// Deterministic asks for deterministic kernels where the library has a choice.
	Deterministic bool
	// Device is DeviceCPU ("" too) or DeviceCUDA (the CUDA execution provider first, CPU for the
	// nodes it does not take).
	Device string
	// CUDADevice is the GPU ordinal for DeviceCUDA.
	CUDADevice int
	// TF32 lets the CUDA provider use TensorFloat-32 matrix products (its option use_tf32); off,
	// they are plain fp32.
	TF32 bool
}

// HasProvider reports whether the library lists the named execution provider (GetAvailableProviders).
func (r *Runtime) HasProvider(name string) (bool, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var has C.int
	if err := cerr("GetAvailableProviders", C.rt_has_provider(r.rt, cname, &has)); err != nil {
		return false, err
	}
	return has != 0, nil
}

func (r *Runtime) sessionOptions(o Options) (*C.OrtSessionOptions, error) {
	var opts *C.OrtSessionOptions
	det := C.int(0)
	if o.Deterministic {
		det = 1
	}
	cudaDevice, tf32 := C.int(-1), C.int(0)
	if o.TF32 {
		tf32 = 1
	}
	switch o.Device {
	case "", DeviceCPU:
	case DeviceCUDA:
		has, err := r.HasProvider(CUDAProvider)
		if err != nil {
			return nil, fmt.Errorf("onnxruntime %s: %w", r.path, err)
		}
		if !has {
			return nil, fmt.Errorf("onnxruntime %s (%s): %w: %s", r.path, r.Version(), ErrNoCUDA, GPUHint)
		}
		if o.CUDADevice < 0 {
			return nil, fmt.Errorf("CUDA device %d: want a GPU ordinal >= 0", o.CUDADevice)
		}
		cudaDevice = C.int(o.CUDADevice)
	default:
		return nil, fmt.Errorf("device %q: want %s or %s", o.Device, DeviceCPU, DeviceCUDA)
	}
	if err := cerr("session options", C.rt_session_options(r.rt, C.int(o.Threads), det, cudaDevice, tf32, &opts)); err != nil {
		if cudaDevice >= 0 {
			return nil, fmt.Errorf("onnxruntime %s: the CUDA execution provider could not start on GPU %d "+
				"(it needs an NVIDIA GPU and libcudart.so.13, libcublas.so.13, libcublasLt.so.13, libcufft.so.12 and libcudnn.so.9 on LD_LIBRARY_PATH): %w",
				r.path, o.CUDADevice, err)
		}
		return nil, err
	}
	return opts, nil
}

// Tensor is an ONNX Runtime value over C memory that it owns.
type Tensor struct {
	r     *Runtime
	value *C.OrtValue
	data  unsafe.Pointer
}

// NewInt64Tensor copies data into a new int64 tensor of the given shape.
func (r *Runtime) NewInt64Tensor(data []int64, shape ...int64) (*Tensor, error) {
	return r.newTensor(unsafe.Pointer(unsafe.SliceData(data)), len(data)*8, len(data), shape, C.ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64)
}

// NewFloat32Tensor copies data into a new float32 tensor of the given shape.
func (r *Runtime) NewFloat32Tensor(data []float32, shape ...int64) (*Tensor, error) {
	return r.newTensor(unsafe.Pointer(unsafe.SliceData(data)), len(data)*4, len(data), shape, C.ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT)
}

func (r *Runtime) newTensor(src unsafe.Pointer, bytes, n int, shape []int64, typ C.ONNXTensorElementDataType) (*Tensor, error) {
	want := int64(1)
	for _, d := range shape {
		want *= d
	}
	if want != int64(n) {
		return nil, fmt.Errorf("tensor: %d values do not fill shape %v", n, shape)
	}
	size := bytes
	if size == 0 {
		size = 1
	}
	mem := C.malloc(C.size_t(size))
	if bytes > 0 {
		C.memcpy(mem, src, C.size_t(bytes))
	}
	cshape := (*C.int64_t)(C.malloc(C.size_t(8 * max(len(shape), 1))))
	defer C.free(unsafe.Pointer(cshape))
	copy(unsafe.Slice((*int64)(unsafe.Pointer(cshape)), len(shape)), shape)
	t := &Tensor{r: r, data: mem}
	if err := cerr("tensor", C.rt_tensor(r.rt, mem, C.size_t(bytes), cshape, C.size_t(len(shape)), typ, &t.value)); err != nil {
		C.free(mem)
		return nil, err
	}
	return t, nil
}

// Close releases the value and its memory.
func (t *Tensor) Close() {
	if t == nil || t.value == nil {
		return
	}
	C.rt_release_value(t.r.rt, t.value)
	C.free(t.data)
	t.value, t.data = nil, nil
}

func valuesArray(ts []*Tensor) (**C.OrtValue, func()) {
	arr := (**C.OrtValue)(C.malloc(C.size_t(unsafe.Sizeof((*C.OrtValue)(nil)) * uintptr(max(len(ts), 1)))))
	s := unsafe.Slice(arr, len(ts))
	for i, t := range ts {
		s[i] = t.value
	}
	return arr, func() { C.free(unsafe.Pointer(arr)) }
}

// floatsOf copies a float output value into Go memory and releases it.
func (r *Runtime) floatsOf(v *C.OrtValue) ([]float32, error) {
	defer C.rt_release_value(r.rt, v)
	var data *C.float
	var n C.size_t
	if err := cerr("read output", C.rt_tensor_float_data(r.rt, v, &data, &n)); err != nil {
		return nil, err
	}
	out := make([]float32, int(n))
	copy(out, unsafe.Slice((*float32)(unsafe.Pointer(data)), int(n)))
	return out, nil
}

// Checkpoint is an OrtCheckpointState: parameters, optimizer state and properties.
type Checkpoint struct {
	r     *Runtime
	state *C.OrtCheckpointState
}

// LoadCheckpoint reads a checkpoint file (written by the artifact builder or SaveCheckpoint).
func (r *Runtime) LoadCheckpoint(path string) (*Checkpoint, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	c := &Checkpoint{r: r}
	if err := cerr("load checkpoint "+path, C.rt_load_checkpoint(r.rt, cpath, &c.state)); err != nil {
		return nil, err
	}
	return c, nil
}

// Save writes the checkpoint to path, with the optimizer state when withOptimizer is set.
func (c *Checkpoint) Save(path string, withOptimizer bool) error {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	return cerr("save checkpoint "+path, C.rt_save_checkpoint(c.r.rt, c.state, cpath, C.bool(withOptimizer)))
}

// SetInt stores an integer property (e.g. the step count) in the checkpoint.
func (c *Checkpoint) SetInt(name string, v int64) error {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	return cerr("checkpoint property "+name, C.rt_add_int_property(c.r.rt, c.state, cname, C.int64_t(v)))
}

// Int reads an integer property.
func (c *Checkpoint) Int(name string) (int64, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var v C.int64_t
	if err := cerr("checkpoint property "+name, C.rt_get_int_property(c.r.rt, c.state, cname, &v)); err != nil {
		return 0, err
	}
	return int64(v), nil
}

// Parameter returns a copy of the named parameter's values (float32).
func (c *Checkpoint) Parameter(name string) ([]float32, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var v *C.OrtValue
	if err := cerr("parameter "+name, C.rt_get_parameter(c.r.rt, c.state, cname, &v)); err != nil {
		return nil, err
	}
	return c.r.floatsOf(v)
}

// Close releases the state. Release it only after every session built on it.
func (c *Checkpoint) Close() {
	if c != nil && c.state != nil {
		C.rt_release_checkpoint(c.r.rt, c.state)
		c.state = nil
	}
}

// TrainingSession runs train, eval and optimizer steps over a checkpoint state.
type TrainingSession struct {
	r    *Runtime
	sess *C.OrtTrainingSession
}

// NewTrainingSession creates a session from the training, eval and optimizer models (eval and
// optimizer may be empty).
func (r *Runtime) NewTrainingSession(c *Checkpoint, trainModel, evalModel, optimizerModel string, o Options) (*TrainingSession, error) {
	opts, err := r.sessionOptions(o)
	if err != nil {
		return nil, err
	}
	defer C.rt_release_session_options(r.rt, opts)
	ctrain := C.CString(trainModel)
	defer C.free(unsafe.Pointer(ctrain))
	var ceval, coptim *C.char
	if evalModel != "" {
		ceval = C.CString(evalModel)
		defer C.free(unsafe.Pointer(ceval))
	}
	if optimizerModel != "" {
		coptim = C.CString(optimizerModel)
		defer C.free(unsafe.Pointer(coptim))
	}
	s := &TrainingSession{r: r}
	if err := cerr("training session "+trainModel, C.rt_create_training_session(r.rt, opts, c.state, ctrain, ceval, coptim, &s.sess)); err != nil {
		return nil, err
	}
	return s, nil
}

// TrainStep runs forward and backward on the inputs (in the training model's input order),
// accumulating gradients, and returns the loss.
func (s *TrainingSession) TrainStep(inputs []*Tensor) (float32, error) {
	arr, free := valuesArray(inputs)
	defer free()
	var loss C.float
	err := cerr("TrainStep", C.rt_train_step(s.r.rt, s.sess, C.size_t(len(inputs)), arr, &loss))
	runtime.KeepAlive(inputs)
	return float32(loss), err
}

// EvalStep runs the eval model (forward only) and returns the loss.
func (s *TrainingSession) EvalStep(inputs []*Tensor) (float32, error) {
	arr, free := valuesArray(inputs)
	defer free()
	var loss C.float
	err := cerr("EvalStep", C.rt_eval_step(s.r.rt, s.sess, C.size_t(len(inputs)), arr, &loss))
	runtime.KeepAlive(inputs)
	return float32(loss), err
}

// OptimizerStep applies the accumulated gradients.
func (s *TrainingSession) OptimizerStep() error {
	return cerr("OptimizerStep", C.rt_optimizer_step(s.r.rt, s.sess))
}

// LazyResetGrad zeroes the gradients before the next TrainStep.
func (s *TrainingSession) LazyResetGrad() error {
	return cerr("LazyResetGrad", C.rt_lazy_reset_grad(s.r.rt, s.sess))
}

// SetLearningRate sets the optimizer's learning rate for the next OptimizerStep.
func (s *TrainingSession) SetLearningRate(lr float32) error {
	return cerr("SetLearningRate", C.rt_set_learning_rate(s.r.rt, s.sess, C.float(lr)))
}

// LearningRate returns the optimizer's current learning rate.
func (s *TrainingSession) LearningRate() (float32, error) {
	var lr C.float
	err := cerr("GetLearningRate", C.rt_get_learning_rate(s.r.rt, s.sess, &lr))
	return float32(lr), err
}

// RegisterLinearLRScheduler installs the library's own linear warm-up/decay schedule.
func (s *TrainingSession) RegisterLinearLRScheduler(warmup, total int64, initialLR float32) error {
	return cerr("RegisterLinearLRScheduler", C.rt_register_linear_lr_scheduler(s.r.rt, s.sess, C.int64_t(warmup), C.int64_t(total), C.float(initialLR)))
}

// SchedulerStep advances the registered scheduler by one step.
func (s *TrainingSession) SchedulerStep() error {
	return cerr("SchedulerStep", C.rt_scheduler_step(s.r.rt, s.sess))
}

// ParametersSize is the number of parameter values (trainable only, or all).
func (s *TrainingSession) ParametersSize(trainableOnly bool) (int, error) {
	var n C.size_t
	err := cerr("GetParametersSize", C.rt_parameters_size(s.r.rt, s.sess, C.bool(trainableOnly), &n))
	return int(n), err
}

// CopyParameters returns all parameter values flattened, in the session's parameter order.
func (s *TrainingSession) CopyParameters(trainableOnly bool) ([]float32, error) {
	n, err := s.ParametersSize(trainableOnly)
	if err != nil {
		return nil, err
	}
	buf := (*C.float)(C.malloc(C.size_t(4 * max(n, 1))))
	defer C.free(unsafe.Pointer(buf))
	if err := cerr("CopyParametersToBuffer", C.rt_copy_parameters_to_buffer(s.r.rt, s.sess, buf, C.size_t(n), C.bool(trainableOnly))); err != nil {
		return nil, err
	}
	out := make([]float32, n)
	copy(out, unsafe.Slice((*float32)(unsafe.Pointer(buf)), n))
	return out, nil
}

// ExportForInferencing writes the eval graph with the current parameters, keeping the named
// outputs (the library's own export; its shapes are the training graph's bound ones).
func (s *TrainingSession) ExportForInferencing(path string, outputs []string) error {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	names := make([]*C.char, len(outputs))
	for i, o := range outputs {
		names[i] = C.CString(o)
		defer C.free(unsafe.Pointer(names[i]))
	}
	arr := (**C.char)(C.malloc(C.size_t(unsafe.Sizeof((*C.char)(nil)) * uintptr(max(len(names), 1)))))
	defer C.free(unsafe.Pointer(arr))
	copy(unsafe.Slice(arr, len(names)), names)
	return cerr("ExportModelForInferencing "+path, C.rt_export_for_inferencing(s.r.rt, s.sess, cpath, C.size_t(len(names)), arr))
}

// Close releases the session.
func (s *TrainingSession) Close() {
	if s != nil && s.sess != nil {
		C.rt_release_training_session(s.r.rt, s.sess)
		s.sess = nil
	}
}

// Session is a plain inference session.
type Session struct {
	r    *Runtime
	sess *C.OrtSession
}

// NewSession opens an inference model.
func (r *Runtime) NewSession(model string, o Options) (*Session, error) {
	opts, err := r.sessionOptions(o)
	if err != nil {
		return nil, err
	}
	defer C.rt_release_session_options(r.rt, opts)
	cpath := C.CString(model)
	defer C.free(unsafe.Pointer(cpath))
	s := &Session{r: r}
	if err := cerr("inference session "+model, C.rt_create_session(r.rt, opts, cpath, &s.sess)); err != nil {
		return nil, err
	}
	return s, nil
}

// Run feeds the named inputs and returns the named float output, flattened.
func (s *Session) Run(names []string, inputs []*Tensor, output string) ([]float32, error) {
	if len(names) != len(inputs) {
		return nil, errors.New("run: names and inputs differ in length")
	}
	cnames := make([]*C.char, len(names))
	for i, n := range names {
		cnames[i] = C.CString(n)
		defer C.free(unsafe.Pointer(cnames[i]))
	}
	carr := (**C.char)(C.malloc(C.size_t(unsafe.Sizeof((*C.char)(nil)) * uintptr(max(len(names), 1)))))
	defer C.free(unsafe.Pointer(carr))
	copy(unsafe.Slice(carr, len(cnames)), cnames)
	arr, free := valuesArray(inputs)
	defer free()
	cout := C.CString(output)
	defer C.free(unsafe.Pointer(cout))
	var v *C.OrtValue
	if err := cerr("run", C.rt_run(s.r.rt, s.sess, C.size_t(len(inputs)), carr, arr, cout, &v)); err != nil {
		return nil, err
	}
	runtime.KeepAlive(inputs)
	return s.r.floatsOf(v)
}

// Close releases the session.
func (s *Session) Close() {
	if s != nil && s.sess != nil {
		C.rt_release_session(s.r.rt, s.sess)
		s.sess = nil
	}
}
