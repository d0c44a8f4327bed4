package home

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each rule of the package documentation, first match wins, with hand-written expectations.
func TestResolveOrder(t *testing.T) {
	wd := t.TempDir()
	withRepoHome := t.TempDir()
	if err := os.Mkdir(filepath.Join(withRepoHome, ".rated"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	cases := []struct {
		name    string
		in      Inputs
		dir     string
		from    string
		wantErr bool
	}{
		{"flag wins", Inputs{Flag: "/f", Getenv: env("RATED_HOME", "/h", "HOME", "/u"), WorkDir: withRepoHome}, "/f", "--home", false},
		{"relative flag", Inputs{Flag: "assets", WorkDir: wd}, filepath.Join(wd, "assets"), "--home", false},
		{"RATED_HOME", Inputs{Getenv: env("RATED_HOME", "/h", "RATED_ASSETS", "/a"), WorkDir: withRepoHome}, "/h", "RATED_HOME", false},
		{"RATED_ASSETS alias", Inputs{Getenv: env("RATED_ASSETS", "/a", "HOME", "/u"), WorkDir: withRepoHome}, "/a", "RATED_ASSETS (alias of RATED_HOME)", false},
		{"./.rated", Inputs{Getenv: env("XDG_DATA_HOME", "/x", "HOME", "/u"), WorkDir: withRepoHome}, filepath.Join(withRepoHome, ".rated"), "./.rated in the working directory", false},
		{"XDG_DATA_HOME", Inputs{Getenv: env("XDG_DATA_HOME", "/x", "HOME", "/u"), WorkDir: wd}, "/x/rated", "$XDG_DATA_HOME/rated", false},
		{"relative XDG_DATA_HOME is ignored (XDG spec)", Inputs{Getenv: env("XDG_DATA_HOME", "x", "HOME", "/u"), WorkDir: wd}, "/u/.local/share/rated", "default ~/.local/share/rated", false},
		{"default", Inputs{Getenv: env("HOME", "/u"), WorkDir: wd}, "/u/.local/share/rated", "default ~/.local/share/rated", false},
		{"nothing", Inputs{WorkDir: wd}, "", "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, err := Resolve(c.in)
			if c.wantErr {
				if err == nil {
					t.Fatalf("want an error, got %+v", h)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if h.Dir != c.dir || h.From != c.from {
				t.Errorf("got %q (%s), want %q (%s)", h.Dir, h.From, c.dir, c.from)
			}
		})
	}
}

// A .rated file (not a folder) in the working directory is not a home.
func TestRepoHomeMustBeAFolder(t *testing.T) {
	wd := t.TempDir()
	if err := os.WriteFile(filepath.Join(wd, ".rated"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := Resolve(Inputs{Getenv: func(k string) string { return map[string]string{"HOME": "/u"}[k] }, WorkDir: wd})
	if err != nil || h.Dir != "/u/.local/share/rated" {
		t.Errorf("got %+v, %v", h, err)
	}
}

func TestMissingNamesTheHomeAndTheSetupPart(t *testing.T) {
	h := Home{Dir: "/data/rated", From: "RATED_HOME"}
	err := h.Missing("ONNX Runtime library", h.ORTLibrary(), "onnxruntime")
	for _, want := range []string{"ONNX Runtime library not found at /data/rated/lib/libonnxruntime.so", "/data/rated (RATED_HOME)", "rated setup onnxruntime"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
}

func ExampleResolve() {
	env := map[string]string{"HOME": "/home/ada"}
	h, _ := Resolve(Inputs{Getenv: func(k string) string { return env[k] }, WorkDir: "/nonexistent/work"})
	fmt.Println(h)
	fmt.Println(h.ModelsDir())
	// Output:
	// /home/ada/.local/share/rated (default ~/.local/share/rated)
	// /home/ada/.local/share/rated/models
}
