// Package home is rated's one asset resolver: where the ONNX Runtime library, the encoder model
// folders, the local LLM, the training library, the download caches and the catalog sources live,
// for every command and every test, from any working directory.
//
// The home is chosen, first match wins:
//
//  1. the --home flag;
//  2. $RATED_HOME;
//  3. $RATED_ASSETS (the older name, still honoured because scripts and CI set it);
//  4. ./.rated when the working directory holds one (the repository's own make targets);
//  5. $XDG_DATA_HOME/rated;
//  6. $HOME/.local/share/rated.
//
// `rated setup` installs into the home; a missing asset is an error that names the home, how it
// was chosen and the `rated setup` part that installs it.
package home

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Env names the environment variables the resolver reads.
const (
	EnvHome   = "RATED_HOME"
	EnvAssets = "RATED_ASSETS"
)

// RepoDirName is the home the repository's make targets use, honoured in the working directory.
const RepoDirName = ".rated"

// Home is a resolved asset home.
type Home struct {
	// Dir is the absolute path of the home.
	Dir string
	// From says how Dir was chosen ("--home", "RATED_HOME", "./.rated in the working directory" …).
	From string
}

// Inputs are what Resolve looks at; pass os.Getenv and the working directory in production.
type Inputs struct {
	// Flag is the --home value ("" when not given).
	Flag string
	// Getenv reads an environment variable.
	Getenv func(string) string
	// WorkDir is the directory relative paths and ./.rated are taken from.
	WorkDir string
}

// Resolve chooses the home by the rules of the package documentation. It fails only when no rule
// applies (no $HOME either) or a path cannot be made absolute.
func Resolve(in Inputs) (Home, error) {
	getenv := in.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	abs := func(p, from string) (Home, error) {
		if !filepath.IsAbs(p) {
			p = filepath.Join(in.WorkDir, p)
		}
		return Home{Dir: filepath.Clean(p), From: from}, nil
	}
	switch {
	case in.Flag != "":
		return abs(in.Flag, "--home")
	case getenv(EnvHome) != "":
		return abs(getenv(EnvHome), EnvHome)
	case getenv(EnvAssets) != "":
		return abs(getenv(EnvAssets), EnvAssets+" (alias of "+EnvHome+")")
	}
	if in.WorkDir != "" {
		if st, err := os.Stat(filepath.Join(in.WorkDir, RepoDirName)); err == nil && st.IsDir() {
			return abs(RepoDirName, "./"+RepoDirName+" in the working directory")
		}
	}
	if x := getenv("XDG_DATA_HOME"); x != "" && filepath.IsAbs(x) {
		return Home{Dir: filepath.Join(x, "rated"), From: "$XDG_DATA_HOME/rated"}, nil
	}
	if h := getenv("HOME"); h != "" {
		return Home{Dir: filepath.Join(h, ".local", "share", "rated"), From: "default ~/.local/share/rated"}, nil
	}
	return Home{}, errors.New("asset home: no --home, RATED_HOME, ./.rated, XDG_DATA_HOME or HOME to place it in")
}

// FromEnvironment resolves the home for this process: flag, os.Getenv and the working directory.
func FromEnvironment(flag string) (Home, error) {
	wd, err := os.Getwd()
	if err != nil {
		return Home{}, fmt.Errorf("asset home: %w", err)
	}
	return Resolve(Inputs{Flag: flag, Getenv: os.Getenv, WorkDir: wd})
}

// String is "DIR (FROM)", the form error messages use.
func (h Home) String() string { return fmt.Sprintf("%s (%s)", h.Dir, h.From) }

// Path joins elements under the home.
func (h Home) Path(elem ...string) string { return filepath.Join(append([]string{h.Dir}, elem...)...) }

// ModelsDir holds the encoder model folders (`rated setup models`, `rated model import`).
func (h Home) ModelsDir() string { return h.Path("models") }

// ORTLibrary is the ONNX Runtime inference library (`rated setup onnxruntime`).
func (h Home) ORTLibrary() string { return h.Path("lib", "libonnxruntime.so") }

// TrainingLibrary is the ONNX Runtime build with the training API (`rated setup training`).
func (h Home) TrainingLibrary() string { return h.Path("lib", "training", "libonnxruntime.so") }

// TrainingGPULibrary is the CUDA build of the training library (RATED_GPU=1 rated setup training).
func (h Home) TrainingGPULibrary() string { return h.Path("lib", "training-gpu", "libonnxruntime.so") }

// TrainVenv is the Python venv that builds training artifacts (`rated setup training`).
func (h Home) TrainVenv() string { return h.Path("train-venv") }

// ReferenceVenv is the Python venv of the reference implementations the tests compare against
// (`rated setup venv`).
func (h Home) ReferenceVenv() string { return h.Path("venv") }

// EmbeddingCache is where encoders keep embeddings keyed by model and text.
func (h Home) EmbeddingCache() string { return h.Path("cache", "embeddings") }

// SourcesDir is the download cache of the pinned catalog packages (`rated setup sources`).
func (h Home) SourcesDir() string { return h.Path("sources") }

// RunDir holds the local LLM server's pid file and log.
func (h Home) RunDir() string { return h.Path("run") }

// Missing is the error for an asset that is not installed: it names the asset, where it was
// looked for, the home and how it was chosen, and the `rated setup` part that installs it.
func (h Home) Missing(what, path, part string) error {
	return fmt.Errorf("%s not found at %s; asset home %s: install it with `rated setup %s` (or point RATED_HOME / --home at a home that has it)",
		what, path, h, part)
}
