package setup

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rated-dev/rated/scripts"
)

func TestSelect(t *testing.T) {
	ps, err := Select([]string{"models", "onnxruntime", "Models"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	if strings.Join(names, ",") != "onnxruntime,models" {
		t.Errorf("got %v, want installation order onnxruntime,models", names)
	}
	all, err := Select([]string{"all"})
	if err != nil || len(all) != len(Parts()) {
		t.Errorf("all: %d parts, %v", len(all), err)
	}
	if _, err := Select([]string{"all", "bogus"}); err == nil || !strings.Contains(err.Error(), `"bogus"`) {
		t.Errorf("all, bogus: %v, want the typo named", err)
	}
	if _, err := Select([]string{"gpu"}); err == nil || !strings.Contains(err.Error(), "venv, onnxruntime, models, models-int8, baselines, sources, llm, training, redis, all") {
		t.Errorf("unknown part: %v", err)
	}
}

// Every step script of scripts/setup.d belongs to exactly one part, so none is forgotten.
func TestEveryStepBelongsToOnePart(t *testing.T) {
	steps, err := fs.Glob(scripts.Files, "setup.d/*.sh")
	if err != nil || len(steps) == 0 {
		t.Fatalf("embedded steps: %v %v", steps, err)
	}
	for _, s := range steps {
		n := 0
		for _, p := range Parts() {
			if slices.Contains(p.Steps, filepath.Base(s)) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s is in %d parts", s, n)
		}
	}
}

// Check refuses, before any work, a missing program (naming each alternative) and a platform
// without the native libraries.
func TestCheck(t *testing.T) {
	have := func(progs ...string) func(string) (string, error) {
		return func(p string) (string, error) {
			if slices.Contains(progs, p) {
				return "/usr/bin/" + p, nil
			}
			return "", errors.New("not found")
		}
	}
	ort, _ := Select([]string{"onnxruntime"})
	if err := Check(ort, have("bash", "sha256sum", "curl", "unzip"), "linux", "amd64"); err != nil {
		t.Errorf("curl + unzip serve onnxruntime: %v", err)
	}
	err := Check(ort, have("bash", "sha256sum", "tar"), "linux", "amd64")
	if err == nil || !strings.Contains(err.Error(), "onnxruntime: needs programs not on PATH: npm; or curl, unzip") {
		t.Errorf("got %v", err)
	}
	if err := Check(ort, have("bash", "sha256sum", "npm", "tar"), "darwin", "arm64"); err == nil || !strings.Contains(err.Error(), "Linux x86-64") {
		t.Errorf("darwin: %v", err)
	}
	models, _ := Select([]string{"models"})
	if err := Check(models, have("bash", "sha256sum", "curl", "python3"), "darwin", "arm64"); err != nil {
		t.Errorf("model folders are not platform-specific: %v", err)
	}
}

// The bundle is laid out like the repository, so the steps find $root/scripts/lib and
// $root/configs, and it is removed afterwards.
func TestBundleLayout(t *testing.T) {
	var root string
	err := WithBundle(func(r string) error {
		root = r
		for _, f := range []string{"scripts/setup.d/20-models.sh", "scripts/lib/maven.sh", "scripts/llm-up", "scripts/train/build_artifacts.py",
			"scripts/requirements-ref.txt", "configs/llm.yaml", "configs/sources.yaml", "configs/paper.yaml"} {
			if st, err := os.Stat(filepath.Join(r, f)); err != nil || st.Size() == 0 {
				t.Errorf("%s: %v", f, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(root); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("bundle %s left behind: %v", root, err)
	}
}

// Status counts the files under a part's paths (hand-made sizes) and its markers.
func TestStatus(t *testing.T) {
	home := t.TempDir()
	write := func(rel string, n int) {
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("lib/libonnxruntime.so", 1000)
	write("cache/onnxruntime/onnxruntime-node-1.19.2.tgz", 300)
	write("lib/training/libonnxruntime.so", 7) // training's, not onnxruntime's
	write("models/bge-small-en-v1.5/rated.yaml", 10)
	if err := os.Symlink(filepath.Join(home, "lib", "libonnxruntime.so"), filepath.Join(home, "lib", "libonnxruntime.so.1")); err != nil {
		t.Fatal(err)
	}
	ps, _ := Select([]string{"onnxruntime", "models"})
	st, err := Status(home, ps)
	if err != nil {
		t.Fatal(err)
	}
	if !st[0].Installed || st[0].Bytes != 1300 {
		t.Errorf("onnxruntime: %+v, want installed, 1300 bytes", st[0])
	}
	if st[1].Installed || st[1].Bytes != 10 {
		t.Errorf("models (all-minilm-l6-v2 missing): %+v, want not installed, 10 bytes", st[1])
	}
}

// TestStatusNeedsTheLastStamp: a step that stopped half-way leaves what it made first (the
// sources folders, a venv's python before pip ran); only the stamp each step writes last
// marks its part installed.
func TestStatusNeedsTheLastStamp(t *testing.T) {
	home := t.TempDir()
	for _, rel := range []string{"sources/npm", "sources/pypi", "venv/bin", "train-venv/bin"} {
		os.MkdirAll(filepath.Join(home, rel), 0o755)
	}
	os.WriteFile(filepath.Join(home, "venv/bin/python"), nil, 0o755)
	os.WriteFile(filepath.Join(home, "train-venv/bin/python"), nil, 0o755)
	os.MkdirAll(filepath.Join(home, "lib/training"), 0o755)
	os.WriteFile(filepath.Join(home, "lib/training/libonnxruntime.so"), []byte("x"), 0o644)
	ps, _ := Select([]string{"venv", "sources", "training"})
	st, err := Status(home, ps)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st {
		if s.Installed {
			t.Errorf("%s: installed without its last stamp", s.Part.Name)
		}
	}
	for _, rel := range []string{"sources/.complete", "venv/.requirements.sha256", "venv/.obp.sha256", "train-venv/.requirements"} {
		os.WriteFile(filepath.Join(home, rel), []byte("x"), 0o644)
	}
	st, _ = Status(home, ps)
	for _, s := range st {
		if !s.Installed {
			t.Errorf("%s: not installed with its stamps", s.Part.Name)
		}
	}
}
