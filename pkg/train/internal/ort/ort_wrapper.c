#include "ort_wrapper.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char* dup_msg(const char* prefix, const char* msg) {
  size_t n = strlen(prefix) + strlen(msg) + 3;
  char* out = malloc(n);
  snprintf(out, n, "%s: %s", prefix, msg);
  return out;
}

// status converts an OrtStatus into an error message (NULL for success) and releases it.
static char* status(RtOrt* rt, OrtStatus* st, const char* what) {
  if (st == NULL) return NULL;
  char* out = dup_msg(what, rt->api->GetErrorMessage(st));
  rt->api->ReleaseStatus(st);
  return out;
}

#define CHECK(what, call)                   \
  do {                                      \
    char* _e = status(rt, (call), (what));  \
    if (_e != NULL) return _e;              \
  } while (0)

#define NEED_TRAINING()                                                              \
  do {                                                                               \
    if (rt->tapi == NULL) return dup_msg("onnxruntime", "library has no training API"); \
  } while (0)

char* rt_load(const char* path, RtOrt* rt) {
  memset(rt, 0, sizeof(*rt));
  rt->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (rt->handle == NULL) return dup_msg("dlopen", dlerror());
  typedef const OrtApiBase* (*GetApiBaseFn)(void);
  GetApiBaseFn get_base = (GetApiBaseFn)dlsym(rt->handle, "OrtGetApiBase");
  if (get_base == NULL) {
    char* e = dup_msg("dlsym OrtGetApiBase", dlerror());
    dlclose(rt->handle);
    rt->handle = NULL;
    return e;
  }
  const OrtApiBase* base = get_base();
  snprintf(rt->version, sizeof(rt->version), "%s", base->GetVersionString());
  rt->api = base->GetApi(ORT_API_VERSION);
  if (rt->api == NULL) {
    dlclose(rt->handle);
    rt->handle = NULL;
    return dup_msg("onnxruntime", "library does not serve C API version 19 (too old)");
  }
  rt->tapi = rt->api->GetTrainingApi(ORT_API_VERSION);
  CHECK("CreateEnv", rt->api->CreateEnv(ORT_LOGGING_LEVEL_ERROR, "rated-train", &rt->env));
  CHECK("CreateCpuMemoryInfo", rt->api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &rt->mem));
  CHECK("GetAllocatorWithDefaultOptions", rt->api->GetAllocatorWithDefaultOptions(&rt->alloc));
  return NULL;
}

void rt_unload(RtOrt* rt) {
  if (rt->api != NULL) {
    if (rt->mem != NULL) rt->api->ReleaseMemoryInfo(rt->mem);
    if (rt->env != NULL) rt->api->ReleaseEnv(rt->env);
  }
  // The library stays loaded: ONNX Runtime keeps thread pools and static state that do not
  // survive dlclose.
  memset(rt, 0, sizeof(*rt));
}

char* rt_has_provider(RtOrt* rt, const char* name, int* out) {
  char** names = NULL;
  int n = 0;
  *out = 0;
  CHECK("GetAvailableProviders", rt->api->GetAvailableProviders(&names, &n));
  for (int i = 0; i < n; i++) {
    if (strcmp(names[i], name) == 0) *out = 1;
  }
  CHECK("ReleaseAvailableProviders", rt->api->ReleaseAvailableProviders(names, n));
  return NULL;
}

// append_cuda appends the CUDA execution provider (OrtCUDAProviderOptionsV2: the library fills in
// its defaults, we set the device and use_tf32) to the options.
static char* append_cuda(RtOrt* rt, OrtSessionOptions* o, int cuda_device, int tf32) {
  OrtCUDAProviderOptionsV2* cuda = NULL;
  CHECK("CreateCUDAProviderOptions", rt->api->CreateCUDAProviderOptions(&cuda));
  char device[32];
  snprintf(device, sizeof(device), "%d", cuda_device);
  const char* keys[] = {"device_id", "use_tf32"};
  const char* values[] = {device, tf32 ? "1" : "0"};
  char* e = status(rt, rt->api->UpdateCUDAProviderOptions(cuda, keys, values, 2), "UpdateCUDAProviderOptions");
  if (e == NULL) {
    e = status(rt, rt->api->SessionOptionsAppendExecutionProvider_CUDA_V2(o, cuda),
               "SessionOptionsAppendExecutionProvider_CUDA_V2");
  }
  rt->api->ReleaseCUDAProviderOptions(cuda);
  return e;
}

char* rt_session_options(RtOrt* rt, int threads, int deterministic, int cuda_device, int tf32, OrtSessionOptions** out) {
  *out = NULL;
  OrtSessionOptions* o = NULL;
  CHECK("CreateSessionOptions", rt->api->CreateSessionOptions(&o));
  char* e = NULL;
  if (threads > 0) {
    e = status(rt, rt->api->SetIntraOpNumThreads(o, threads), "SetIntraOpNumThreads");
    if (e == NULL) e = status(rt, rt->api->SetInterOpNumThreads(o, 1), "SetInterOpNumThreads");
  }
  if (e == NULL && deterministic) {
    e = status(rt, rt->api->SetDeterministicCompute(o, 1), "SetDeterministicCompute");
  }
  if (e == NULL && cuda_device >= 0) e = append_cuda(rt, o, cuda_device, tf32);
  if (e != NULL) {
    rt->api->ReleaseSessionOptions(o);
    return e;
  }
  *out = o;
  return NULL;
}

void rt_release_session_options(RtOrt* rt, OrtSessionOptions* o) { rt->api->ReleaseSessionOptions(o); }

char* rt_tensor(RtOrt* rt, void* data, size_t bytes, const int64_t* shape, size_t ndim,
                ONNXTensorElementDataType type, OrtValue** out) {
  CHECK("CreateTensorWithDataAsOrtValue",
        rt->api->CreateTensorWithDataAsOrtValue(rt->mem, data, bytes, shape, ndim, type, out));
  return NULL;
}

char* rt_tensor_float_data(RtOrt* rt, OrtValue* v, float** data, size_t* count) {
  OrtTensorTypeAndShapeInfo* info = NULL;
  CHECK("GetTensorTypeAndShape", rt->api->GetTensorTypeAndShape(v, &info));
  ONNXTensorElementDataType type;
  char* e = status(rt, rt->api->GetTensorElementType(info, &type), "GetTensorElementType");
  if (e == NULL) e = status(rt, rt->api->GetTensorShapeElementCount(info, count), "GetTensorShapeElementCount");
  rt->api->ReleaseTensorTypeAndShapeInfo(info);
  if (e != NULL) return e;
  if (type != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT) return dup_msg("onnxruntime", "tensor is not float32");
  // With a GPU execution provider an output could live in device memory; never read it as host memory.
  const OrtMemoryInfo* where = NULL;
  CHECK("GetTensorMemoryInfo", rt->api->GetTensorMemoryInfo(v, &where));
  OrtMemoryInfoDeviceType device = OrtMemoryInfoDeviceType_CPU;
  rt->api->MemoryInfoGetDeviceType(where, &device);
  if (device != OrtMemoryInfoDeviceType_CPU) return dup_msg("onnxruntime", "output tensor is in device memory, not host memory");
  CHECK("GetTensorMutableData", rt->api->GetTensorMutableData(v, (void**)data));
  return NULL;
}

void rt_release_value(RtOrt* rt, OrtValue* v) {
  if (v != NULL) rt->api->ReleaseValue(v);
}

char* rt_load_checkpoint(RtOrt* rt, const char* path, OrtCheckpointState** out) {
  NEED_TRAINING();
  CHECK("LoadCheckpoint", rt->tapi->LoadCheckpoint(path, out));
  return NULL;
}

char* rt_save_checkpoint(RtOrt* rt, OrtCheckpointState* s, const char* path, bool with_optimizer) {
  NEED_TRAINING();
  CHECK("SaveCheckpoint", rt->tapi->SaveCheckpoint(s, path, with_optimizer));
  return NULL;
}

void rt_release_checkpoint(RtOrt* rt, OrtCheckpointState* s) {
  if (s != NULL) rt->tapi->ReleaseCheckpointState(s);
}

char* rt_add_int_property(RtOrt* rt, OrtCheckpointState* s, const char* name, int64_t value) {
  NEED_TRAINING();
  CHECK("AddProperty", rt->tapi->AddProperty(s, name, OrtIntProperty, &value));
  return NULL;
}

char* rt_get_int_property(RtOrt* rt, OrtCheckpointState* s, const char* name, int64_t* value) {
  NEED_TRAINING();
  enum OrtPropertyType type;
  void* raw = NULL;
  CHECK("GetProperty", rt->tapi->GetProperty(s, name, rt->alloc, &type, &raw));
  if (type != OrtIntProperty) {
    rt->alloc->Free(rt->alloc, raw);
    return dup_msg("GetProperty", "property is not an integer");
  }
  *value = *(int64_t*)raw;
  rt->alloc->Free(rt->alloc, raw);
  return NULL;
}

char* rt_get_parameter(RtOrt* rt, OrtCheckpointState* s, const char* name, OrtValue** out) {
  NEED_TRAINING();
  CHECK("GetParameter", rt->tapi->GetParameter(s, name, rt->alloc, out));
  return NULL;
}

char* rt_create_training_session(RtOrt* rt, OrtSessionOptions* o, OrtCheckpointState* s,
                                 const char* train, const char* eval, const char* optim,
                                 OrtTrainingSession** out) {
  NEED_TRAINING();
  CHECK("CreateTrainingSession",
        rt->tapi->CreateTrainingSession(rt->env, o, s, train, eval, optim, out));
  return NULL;
}

void rt_release_training_session(RtOrt* rt, OrtTrainingSession* ts) {
  if (ts != NULL) rt->tapi->ReleaseTrainingSession(ts);
}

typedef OrtStatus*(ORT_API_CALL* StepFn)(OrtTrainingSession*, const OrtRunOptions*, size_t,
                                         const OrtValue* const*, size_t, OrtValue**);

// step runs a train or eval step and reads the first output as the scalar loss.
static char* step(RtOrt* rt, OrtTrainingSession* ts, bool train, size_t n, OrtValue** inputs, float* loss) {
  size_t n_out = 0;
  if (train) {
    CHECK("TrainingSessionGetTrainingModelOutputCount", rt->tapi->TrainingSessionGetTrainingModelOutputCount(ts, &n_out));
  } else {
    CHECK("TrainingSessionGetEvalModelOutputCount", rt->tapi->TrainingSessionGetEvalModelOutputCount(ts, &n_out));
  }
  if (n_out == 0) return dup_msg("onnxruntime", "model has no outputs");
  OrtValue** outs = calloc(n_out, sizeof(OrtValue*));
  OrtStatus* st;
  if (train) {
    st = rt->tapi->TrainStep(ts, NULL, n, (const OrtValue* const*)inputs, n_out, outs);
  } else {
    st = rt->tapi->EvalStep(ts, NULL, n, (const OrtValue* const*)inputs, n_out, outs);
  }
  char* e = status(rt, st, train ? "TrainStep" : "EvalStep");
  if (e == NULL) {
    float* data = NULL;
    size_t count = 0;
    e = rt_tensor_float_data(rt, outs[0], &data, &count);
    if (e == NULL && count != 1) e = dup_msg("onnxruntime", "loss output is not a scalar");
    if (e == NULL) *loss = data[0];
  }
  for (size_t i = 0; i < n_out; i++) rt_release_value(rt, outs[i]);
  free(outs);
  return e;
}

char* rt_train_step(RtOrt* rt, OrtTrainingSession* ts, size_t n, OrtValue** inputs, float* loss) {
  NEED_TRAINING();
  return step(rt, ts, true, n, inputs, loss);
}

char* rt_eval_step(RtOrt* rt, OrtTrainingSession* ts, size_t n, OrtValue** inputs, float* loss) {
  NEED_TRAINING();
  return step(rt, ts, false, n, inputs, loss);
}

char* rt_optimizer_step(RtOrt* rt, OrtTrainingSession* ts) {
  NEED_TRAINING();
  CHECK("OptimizerStep", rt->tapi->OptimizerStep(ts, NULL));
  return NULL;
}

char* rt_lazy_reset_grad(RtOrt* rt, OrtTrainingSession* ts) {
  NEED_TRAINING();
  CHECK("LazyResetGrad", rt->tapi->LazyResetGrad(ts));
  return NULL;
}

char* rt_set_learning_rate(RtOrt* rt, OrtTrainingSession* ts, float lr) {
  NEED_TRAINING();
  CHECK("SetLearningRate", rt->tapi->SetLearningRate(ts, lr));
  return NULL;
}

char* rt_get_learning_rate(RtOrt* rt, OrtTrainingSession* ts, float* lr) {
  NEED_TRAINING();
  CHECK("GetLearningRate", rt->tapi->GetLearningRate(ts, lr));
  return NULL;
}

char* rt_register_linear_lr_scheduler(RtOrt* rt, OrtTrainingSession* ts, int64_t warmup,
                                      int64_t total, float initial_lr) {
  NEED_TRAINING();
  CHECK("RegisterLinearLRScheduler", rt->tapi->RegisterLinearLRScheduler(ts, warmup, total, initial_lr));
  return NULL;
}

char* rt_scheduler_step(RtOrt* rt, OrtTrainingSession* ts) {
  NEED_TRAINING();
  CHECK("SchedulerStep", rt->tapi->SchedulerStep(ts));
  return NULL;
}

char* rt_parameters_size(RtOrt* rt, OrtTrainingSession* ts, bool trainable_only, size_t* out) {
  NEED_TRAINING();
  CHECK("GetParametersSize", rt->tapi->GetParametersSize(ts, out, trainable_only));
  return NULL;
}

char* rt_copy_parameters_to_buffer(RtOrt* rt, OrtTrainingSession* ts, float* buf, size_t n,
                                   bool trainable_only) {
  NEED_TRAINING();
  int64_t shape[1] = {(int64_t)n};
  OrtValue* v = NULL;
  char* e = rt_tensor(rt, buf, n * sizeof(float), shape, 1, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &v);
  if (e != NULL) return e;
  e = status(rt, rt->tapi->CopyParametersToBuffer(ts, v, trainable_only), "CopyParametersToBuffer");
  rt_release_value(rt, v);
  return e;
}

char* rt_export_for_inferencing(RtOrt* rt, OrtTrainingSession* ts, const char* path, size_t n,
                                const char** output_names) {
  NEED_TRAINING();
  CHECK("ExportModelForInferencing", rt->tapi->ExportModelForInferencing(ts, path, n, output_names));
  return NULL;
}

char* rt_set_seed(RtOrt* rt, int64_t seed) {
  NEED_TRAINING();
  CHECK("SetSeed", rt->tapi->SetSeed(seed));
  return NULL;
}

char* rt_create_session(RtOrt* rt, OrtSessionOptions* o, const char* path, OrtSession** out) {
  CHECK("CreateSession", rt->api->CreateSession(rt->env, path, o, out));
  return NULL;
}

void rt_release_session(RtOrt* rt, OrtSession* s) {
  if (s != NULL) rt->api->ReleaseSession(s);
}

char* rt_run(RtOrt* rt, OrtSession* s, size_t n_in, const char** in_names, OrtValue** inputs,
             const char* out_name, OrtValue** output) {
  CHECK("Run", rt->api->Run(s, NULL, in_names, (const OrtValue* const*)inputs, n_in, &out_name, 1, output));
  return NULL;
}
