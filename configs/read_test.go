package configs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestReadFileFallsBackToTheEmbeddedCopy reads the shipped files under the names the docs use
// from a directory that holds none of them, a file on disk first where there is one, and refuses
// names that are not shipped files.
func TestReadFileFallsBackToTheEmbeddedCopy(t *testing.T) {
	t.Chdir(t.TempDir())
	paper, err := Files.ReadFile("paper.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"configs/paper.yaml", "paper.yaml", "./configs/paper.yaml", "configs/llm-candidates/../paper.yaml"} {
		got, err := ReadFile(p)
		if err != nil || string(got) != string(paper) {
			t.Errorf("%s: %d bytes, %v; want the embedded paper.yaml", p, len(got), err)
		}
	}
	cand, _ := fs.Glob(Files, "llm-candidates/*.yaml")
	if len(cand) == 0 {
		t.Fatal("no embedded llm-candidates")
	}
	if _, err := ReadFile("configs/" + cand[0]); err != nil {
		t.Errorf("configs/%s: %v", cand[0], err)
	}
	if err := os.MkdirAll("configs", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("configs", "paper.yaml"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadFile("configs/paper.yaml"); err != nil || string(got) != "mine" {
		t.Errorf("a file on disk: %q, %v; want it to win", got, err)
	}
	for _, p := range []string{"configs/nosuch.yaml", "../paper.yaml", "/configs/paper.yaml", "configs/paper.yml"} {
		if _, err := ReadFile(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v, want not-exist", p, err)
		}
	}
}
