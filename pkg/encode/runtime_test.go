package encode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRuntime(t *testing.T) {
	rt := sharedRuntime(t)
	if v := rt.Version(); !strings.HasPrefix(v, "1.") {
		t.Errorf("Version = %q", v)
	}
	if rt.TrainingSupported() {
		t.Log("this library has the training API")
	}
	// The same library again is fine (onnxruntime_go's environment is process-wide).
	if err := NewRuntime(rt.LibraryPath()).Init(); err != nil {
		t.Errorf("second Runtime on the same library: %v", err)
	}
	// Another library in the same process is refused, naming both.
	other := filepath.Join(t.TempDir(), "libonnxruntime.so")
	if err := os.Symlink(rt.LibraryPath(), other); err != nil {
		t.Fatal(err)
	}
	err := NewRuntime(other).Init()
	if err == nil || !strings.Contains(err.Error(), "already loaded") || !strings.Contains(err.Error(), other) {
		t.Errorf("second library: error %v", err)
	}
	missing := NewRuntime(filepath.Join(t.TempDir(), "nope.so"))
	if err := missing.Init(); err == nil || !strings.Contains(err.Error(), "rated setup onnxruntime") {
		t.Errorf("missing library: error %v", err)
	}
	if err2 := missing.Init(); err2 == nil || err2.Error() != missing.Init().Error() {
		t.Errorf("Init is not idempotent: %v", err2)
	}
}
