// Package testassets locates the assets that scripts/setup installs (the Python reference venv,
// the ONNX Runtime shared library, model folders) for tests. When an asset is missing a test is
// skipped with a hint, except under RATED_REQUIRE_ASSETS=1 (set by `make test` and CI), where a
// missing asset fails the test, so a green CI always means the reference checks really ran.
package testassets

import (
	"encoding/json"
	"github.com/rated-dev/rated/data"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Root returns the repository root: the nearest directory above the working directory holding
// go.mod.
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("testassets: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Dir returns the asset directory: $RATED_ASSETS, or .rated/ at the repository root.
func Dir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("RATED_ASSETS"); d != "" {
		return d
	}
	return filepath.Join(Root(t), ".rated")
}

// Required reports whether missing assets must fail tests rather than skip them.
func Required() bool { return os.Getenv("RATED_REQUIRE_ASSETS") == "1" }

// Need returns path if it exists; otherwise it skips the test (or fails it under
// RATED_REQUIRE_ASSETS=1), naming the asset and how to install it.
func Need(t testing.TB, what, path string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		if Required() {
			t.Fatalf("%s not found at %s (RATED_REQUIRE_ASSETS=1): run scripts/setup", what, path)
		}
		t.Skipf("%s not found at %s: run scripts/setup to install it", what, path)
	}
	return path
}

// Python returns the interpreter of the reference venv (tokenizers, onnxruntime, pytrec-eval …).
func Python(t testing.TB) string {
	t.Helper()
	return Need(t, "reference Python venv", filepath.Join(Dir(t), "venv", "bin", "python"))
}

// ORTLibrary returns the path of the ONNX Runtime shared library.
func ORTLibrary(t testing.TB) string {
	t.Helper()
	return Need(t, "ONNX Runtime shared library", filepath.Join(Dir(t), "lib", "libonnxruntime.so"))
}

// Model returns the folder of an installed model (model.onnx, tokenizer.json, rated.yaml).
func Model(t testing.TB, name string) string {
	t.Helper()
	return Need(t, "model "+name, filepath.Join(Dir(t), "models", name))
}

// ToolBenchQueries returns the texts of the 765 real ToolBench queries in
// data/toolbench/queries.jsonl (embedded in the binary by package data), in file order.
func ToolBenchQueries(t testing.TB) []string {
	t.Helper()
	var out []string
	for i, line := range strings.Split(strings.TrimRight(string(data.ToolBenchQueries), "\n"), "\n") {
		var row struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("%s:%d: %v", data.ToolBenchQueriesName, i+1, err)
		}
		out = append(out, row.Query)
	}
	return out
}
