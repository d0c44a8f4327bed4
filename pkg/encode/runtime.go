package encode

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// Runtime is the loaded ONNX Runtime shared library. onnxruntime_go keeps the library handle and
// the ORT environment in package-level variables, so a process can load exactly one library:
// Runtime wraps that forced global state in a value that is initialised once (sync.Once) on first
// use, and refuses a second Runtime pointing at a different library with a clear error rather
// than silently using the first one. Share one Runtime between all models of a process.
type Runtime struct {
	libPath string
	once    sync.Once
	err     error
	// digests remembers file hashes so that repeated opens of one folder hash it once.
	digests digestCache
}

// process-wide record of the library onnxruntime_go has loaded (the library's own globals make
// this necessary; see Runtime).
var (
	loadedMu   sync.Mutex
	loadedPath string
)

// NewRuntime returns a Runtime for the shared library at libPath (typically the asset home's
// lib/libonnxruntime.so, pkg/home). Nothing is loaded until the first model is opened.
func NewRuntime(libPath string) *Runtime { return &Runtime{libPath: libPath} }

// LibraryPath is the shared library this Runtime loads.
func (r *Runtime) LibraryPath() string { return r.libPath }

// Init loads the library and creates the ORT environment, once; later calls return the first
// result. It fails when the library is missing, is not a C API build, or when another library
// was already loaded into this process.
func (r *Runtime) Init() error {
	r.once.Do(func() { r.err = r.init() })
	return r.err
}

func (r *Runtime) init() error {
	abs, err := filepath.Abs(r.libPath)
	if err != nil {
		return fmt.Errorf("onnxruntime library %s: %w", r.libPath, err)
	}
	if _, err := os.Stat(abs); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("onnxruntime library %s not found: install it with `rated setup onnxruntime`", abs)
		}
		return fmt.Errorf("onnxruntime library %s: %w", abs, err)
	}
	loadedMu.Lock()
	defer loadedMu.Unlock()
	if ort.IsInitialized() {
		if loadedPath == abs {
			return nil
		}
		return fmt.Errorf("onnxruntime library %s: this process already loaded %s (one library per process)", abs, loadedPath)
	}
	ort.SetSharedLibraryPath(abs)
	if err := ort.InitializeEnvironment(); err != nil {
		return fmt.Errorf("onnxruntime library %s: %w", abs, err)
	}
	loadedPath = abs
	return nil
}

// Version returns the version string the loaded library reports (after Init).
func (r *Runtime) Version() string {
	if r.Init() != nil {
		return ""
	}
	return ort.GetVersion()
}

// TrainingSupported reports whether the loaded library carries the ORT training API.
func (r *Runtime) TrainingSupported() bool {
	if r.Init() != nil {
		return false
	}
	return ort.IsTrainingSupported()
}
