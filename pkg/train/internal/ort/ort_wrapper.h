// Thin C layer over the ONNX Runtime C API and its training API (OrtTrainingApi), loaded at run
// time with dlopen so that the Go build needs no ONNX Runtime to link against. Every function
// returns NULL on success or a malloc'd error message that the caller frees.
#ifndef RATED_ORT_WRAPPER_H
#define RATED_ORT_WRAPPER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "onnxruntime_c_api.h"
#include "onnxruntime_training_c_api.h"

typedef struct {
  void* handle;
  const OrtApi* api;
  const OrtTrainingApi* tapi;  // NULL when the library has no training API compiled in
  OrtEnv* env;
  OrtMemoryInfo* mem;
  OrtAllocator* alloc;
  char version[64];
} RtOrt;

char* rt_load(const char* path, RtOrt* rt);
void rt_unload(RtOrt* rt);

// cuda_device < 0: CPU only; otherwise the CUDA execution provider on that GPU ordinal is appended
// (an error when the library has none or CUDA cannot be initialised); tf32 sets its use_tf32.
char* rt_session_options(RtOrt* rt, int threads, int deterministic, int cuda_device, int tf32, OrtSessionOptions** out);
// rt_has_provider sets *out to 1 when GetAvailableProviders lists name (e.g. "CUDAExecutionProvider").
char* rt_has_provider(RtOrt* rt, const char* name, int* out);
void rt_release_session_options(RtOrt* rt, OrtSessionOptions* o);

// Tensors over C memory owned by the caller (data must outlive the value).
char* rt_tensor(RtOrt* rt, void* data, size_t bytes, const int64_t* shape, size_t ndim,
                ONNXTensorElementDataType type, OrtValue** out);
char* rt_tensor_float_data(RtOrt* rt, OrtValue* v, float** data, size_t* count);
void rt_release_value(RtOrt* rt, OrtValue* v);

// Checkpoints.
char* rt_load_checkpoint(RtOrt* rt, const char* path, OrtCheckpointState** out);
char* rt_save_checkpoint(RtOrt* rt, OrtCheckpointState* s, const char* path, bool with_optimizer);
void rt_release_checkpoint(RtOrt* rt, OrtCheckpointState* s);
char* rt_add_int_property(RtOrt* rt, OrtCheckpointState* s, const char* name, int64_t value);
char* rt_get_int_property(RtOrt* rt, OrtCheckpointState* s, const char* name, int64_t* value);
char* rt_get_parameter(RtOrt* rt, OrtCheckpointState* s, const char* name, OrtValue** out);

// Training sessions.
char* rt_create_training_session(RtOrt* rt, OrtSessionOptions* o, OrtCheckpointState* s,
                                 const char* train, const char* eval, const char* optim,
                                 OrtTrainingSession** out);
void rt_release_training_session(RtOrt* rt, OrtTrainingSession* ts);
char* rt_train_step(RtOrt* rt, OrtTrainingSession* ts, size_t n, OrtValue** inputs, float* loss);
char* rt_eval_step(RtOrt* rt, OrtTrainingSession* ts, size_t n, OrtValue** inputs, float* loss);
char* rt_optimizer_step(RtOrt* rt, OrtTrainingSession* ts);
char* rt_lazy_reset_grad(RtOrt* rt, OrtTrainingSession* ts);
char* rt_set_learning_rate(RtOrt* rt, OrtTrainingSession* ts, float lr);
char* rt_get_learning_rate(RtOrt* rt, OrtTrainingSession* ts, float* lr);
char* rt_register_linear_lr_scheduler(RtOrt* rt, OrtTrainingSession* ts, int64_t warmup,
                                      int64_t total, float initial_lr);
char* rt_scheduler_step(RtOrt* rt, OrtTrainingSession* ts);
char* rt_parameters_size(RtOrt* rt, OrtTrainingSession* ts, bool trainable_only, size_t* out);
char* rt_copy_parameters_to_buffer(RtOrt* rt, OrtTrainingSession* ts, float* buf, size_t n,
                                   bool trainable_only);
char* rt_export_for_inferencing(RtOrt* rt, OrtTrainingSession* ts, const char* path, size_t n,
                                const char** output_names);
char* rt_set_seed(RtOrt* rt, int64_t seed);

// Inference sessions.
char* rt_create_session(RtOrt* rt, OrtSessionOptions* o, const char* path, OrtSession** out);
void rt_release_session(RtOrt* rt, OrtSession* s);
char* rt_run(RtOrt* rt, OrtSession* s, size_t n_in, const char** in_names, OrtValue** inputs,
             const char* out_name, OrtValue** output);

#endif
