// Package testassets locates the assets that `rated setup` installs (the Python reference venv,
// the ONNX Runtime shared library, model folders) for tests, through the same resolver as the
// commands (pkg/home), as if rated ran at the repository root. When an asset is missing a test is
// skipped with a hint, except under RATED_REQUIRE_ASSETS=1 (set by `make test` and CI), where a
// missing asset fails the test, so a green CI always means the reference checks really ran.
package testassets

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rated-dev/rated/data"
	"github.com/rated-dev/rated/pkg/home"
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

// Home returns the asset home as the commands resolve it from the repository root: $RATED_HOME,
// $RATED_ASSETS, ./.rated at the root, then the XDG default (pkg/home).
func Home(t testing.TB) home.Home {
	t.Helper()
	h, err := home.Resolve(home.Inputs{Getenv: os.Getenv, WorkDir: Root(t)})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Dir returns the asset home's directory (see Home).
func Dir(t testing.TB) string {
	t.Helper()
	return Home(t).Dir
}

// Required reports whether missing assets must fail tests rather than skip them.
func Required() bool { return os.Getenv("RATED_REQUIRE_ASSETS") == "1" }

// Need returns path if it exists; otherwise it skips the test (or fails it under
// RATED_REQUIRE_ASSETS=1), naming the asset and how to install it.
func Need(t testing.TB, what, path string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		if Required() {
			t.Fatalf("%s not found at %s (RATED_REQUIRE_ASSETS=1): run `rated setup all` (make setup)", what, path)
		}
		t.Skipf("%s not found at %s: run `rated setup all` (make setup) to install it", what, path)
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

// ReadJSON decodes the JSON file at path into v, failing the test with the path on any error.
func ReadJSON(t testing.TB, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
