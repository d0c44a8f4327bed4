package crawl

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/rated-dev/rated/configs"
	"github.com/rated-dev/rated/pkg/catalog"
)

// Platforms lists the platforms `rated crawl` knows, in crawl order.
var Platforms = []string{catalog.PlatformN8n, catalog.PlatformLangChain, catalog.PlatformCrewAI, catalog.PlatformLlamaIndex}

// Source is one pinned registry package.
type Source struct {
	Registry string `yaml:"registry"` // "npm" or "pypi"
	Package  string `yaml:"package"`
	Version  string `yaml:"version"`
	Kind     string `yaml:"kind"` // "npm", "wheel" or "sdist"
	// Sha256 is the archive's pinned digest (lower-case hex; the registries' own bytes, the same
	// from npm pack and pip download). Fetch refuses a download or a cached file that differs.
	// Empty: not pinned (a version asked of the registry with --latest).
	Sha256 string `yaml:"sha256"`
}

// SourcesConfig is configs/sources.yaml: the pinned sources of each platform.
type SourcesConfig struct {
	Platforms map[string][]Source `yaml:"platforms"`
}

// LoadSources reads and checks a sources file.
func LoadSources(path string) (*SourcesConfig, error) {
	data, err := configs.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read sources: %w", err)
	}
	return ParseSources(path, data)
}

// ParseSources is LoadSources on the content of a file; path names it in errors (the binary
// passes its embedded configs/sources.yaml).
func ParseSources(path string, data []byte) (*SourcesConfig, error) {
	var cfg SourcesConfig
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true) // a misspelt key would silently unpin a source
	if err := dec.Decode(&cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for plat, srcs := range cfg.Platforms {
		if !knownPlatform(plat) {
			return nil, fmt.Errorf("%s: platforms.%s: unknown platform (known: %s)", path, plat, strings.Join(Platforms, ", "))
		}
		for i, s := range srcs {
			if err := s.validate(); err != nil {
				return nil, fmt.Errorf("%s: platforms.%s[%d]: %w", path, plat, i, err)
			}
		}
	}
	return &cfg, nil
}

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)
var safeVersion = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.+_-]*$`)
var safePackage = regexp.MustCompile(`^(@[a-z0-9][a-z0-9._-]*/)?[A-Za-z0-9][A-Za-z0-9._-]*$`)

func (s Source) validate() error {
	switch {
	case s.Registry != "npm" && s.Registry != "pypi":
		return fmt.Errorf("registry %q: want npm or pypi", s.Registry)
	case !safePackage.MatchString(s.Package):
		return fmt.Errorf("package %q is not a registry package name", s.Package)
	case s.Version != "" && !safeVersion.MatchString(s.Version):
		return fmt.Errorf("version %q is not a version", s.Version)
	case s.Kind != "npm" && s.Kind != "wheel" && s.Kind != "sdist":
		return fmt.Errorf("kind %q: want npm, wheel or sdist", s.Kind)
	case (s.Registry == "npm") != (s.Kind == "npm"):
		return fmt.Errorf("kind %q does not fit registry %q", s.Kind, s.Registry)
	case s.Sha256 != "" && !sha256Hex.MatchString(s.Sha256):
		return fmt.Errorf("sha256 %q: want 64 lower-case hex digits", s.Sha256)
	}
	return nil
}

// CacheName is the file name of a downloaded source inside the cache directory:
// <registry>/<package>-<version>.<tgz|whl|tar.gz>, with "@" dropped and "/" as "+". The setup
// script uses the same names.
func (s Source) CacheName() string {
	name := strings.ReplaceAll(strings.TrimPrefix(s.Package, "@"), "/", "+")
	ext := map[string]string{"npm": ".tgz", "wheel": ".whl", "sdist": ".tar.gz"}[s.Kind]
	return filepath.Join(s.Registry, name+"-"+s.Version+ext)
}

// Runner runs an external registry client (npm, pip) and returns its standard output.
type Runner func(ctx context.Context, dir string, name string, args ...string) ([]byte, error)

// ExecRunner runs commands with os/exec, putting standard error into the error.
func ExecRunner(ctx context.Context, dir, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 600 {
			msg = msg[len(msg)-600:]
		}
		return out, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, msg)
	}
	return out, nil
}

// Fetcher downloads pinned sources with the registries' own clients (npm pack, pip download)
// into a cache directory, and reuses what is already there.
type Fetcher struct {
	// Dir is the cache directory (the asset home's sources/, pkg/home).
	Dir string
	// Run runs npm and pip; ExecRunner when nil.
	Run Runner
	// Python is the interpreter whose pip is used ("python3" when empty).
	Python string
}

// registryHint is appended to download errors.
const registryHint = "hint: the registry may be unreachable; crawl a local copy instead with " +
	"`rated crawl --source PLATFORM=PATH` (an archive, an unpacked tree or a bare git directory)"

// Latest asks the registry for the newest version of a source's package.
func (f *Fetcher) Latest(ctx context.Context, s Source) (string, error) {
	run := f.runner()
	switch s.Registry {
	case "npm":
		out, err := run(ctx, "", "npm", "view", s.Package, "version")
		if err != nil {
			return "", fmt.Errorf("latest version of %s: %w\n%s", s.Package, err, registryHint)
		}
		return strings.TrimSpace(string(out)), nil
	default:
		out, err := run(ctx, "", f.python(), "-m", "pip", "index", "versions", s.Package, "--disable-pip-version-check")
		if err != nil {
			return "", fmt.Errorf("latest version of %s: %w\n%s", s.Package, err, registryHint)
		}
		m := regexp.MustCompile(`(?m)^\S+ \(([^)]+)\)`).FindSubmatch(out)
		if m == nil {
			return "", fmt.Errorf("latest version of %s: unexpected pip output %q", s.Package, firstLine(out))
		}
		return string(m[1]), nil
	}
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\n")
	return s
}

func (f *Fetcher) runner() Runner {
	if f.Run != nil {
		return f.Run
	}
	return ExecRunner
}

func (f *Fetcher) python() string {
	if f.Python != "" {
		return f.Python
	}
	return "python3"
}

// checkDigest compares the file at path with the pinned digest (nothing to compare when unpinned).
func (s Source) checkDigest(path string) error {
	if s.Sha256 == "" {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%s %s: %w", s.Package, s.Version, err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("%s %s: %s: %w", s.Package, s.Version, path, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != s.Sha256 {
		return fmt.Errorf("%s %s: %s has sha256 %s, pinned %s", s.Package, s.Version, path, got, s.Sha256)
	}
	return nil
}

// Fetch returns the path of the cached archive of s, downloading it first when missing; with a
// pinned digest, the archive (downloaded or cached) must match it.
func (f *Fetcher) Fetch(ctx context.Context, s Source) (string, error) {
	if err := s.validate(); err != nil {
		return "", err
	}
	if s.Version == "" {
		return "", fmt.Errorf("source %s has no version", s.Package)
	}
	dst := filepath.Join(f.Dir, s.CacheName())
	if st, err := os.Stat(dst); err == nil && st.Size() > 0 {
		if err := s.checkDigest(dst); err != nil {
			return "", fmt.Errorf("cached %w (delete it to download again)", err)
		}
		return dst, nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", fmt.Errorf("create cache directory: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dst), ".download-*")
	if err != nil {
		return "", fmt.Errorf("create download directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	run := f.runner()
	switch s.Kind {
	case "npm":
		_, err = run(ctx, tmp, "npm", "pack", "--silent", s.Package+"@"+s.Version)
	case "wheel":
		_, err = run(ctx, tmp, f.python(), "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
			"--only-binary", ":all:", "-d", tmp, s.Package+"=="+s.Version)
	case "sdist":
		_, err = run(ctx, tmp, f.python(), "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
			"--no-binary", ":all:", "-d", tmp, s.Package+"=="+s.Version)
	}
	if err != nil {
		return "", fmt.Errorf("download %s %s: %w\n%s", s.Package, s.Version, err, registryHint)
	}
	ents, err := os.ReadDir(tmp)
	if err != nil || len(ents) != 1 {
		return "", fmt.Errorf("download %s %s: expected one archive in %s, found %d", s.Package, s.Version, tmp, len(ents))
	}
	got := filepath.Join(tmp, ents[0].Name())
	if err := s.checkDigest(got); err != nil {
		return "", fmt.Errorf("download %w", err)
	}
	if err := os.Rename(got, dst); err != nil {
		return "", fmt.Errorf("download %s %s: %w", s.Package, s.Version, err)
	}
	return dst, nil
}
