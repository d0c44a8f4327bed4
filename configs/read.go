package configs

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// ReadFile reads the configuration file at p. When no file is there and p names one of the
// shipped files as the docs write it (configs/NAME.yaml, configs/llm-candidates/NAME.yaml, or
// the same without configs/; relative), the copy embedded in the binary is read instead, so the
// docs' commands work from an installed rated outside the repository. A file on disk always
// wins; any other error, and a path that names no shipped file, is os.ReadFile's.
func ReadFile(p string) ([]byte, error) {
	data, err := os.ReadFile(p)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return data, err
	}
	if name, ok := EmbeddedName(p); ok {
		if data, eerr := Files.ReadFile(name); eerr == nil {
			return data, nil
		}
	}
	return nil, err
}

// EmbeddedName is the name in Files that the relative path p may mean: p cleaned, without a
// leading configs/.
func EmbeddedName(p string) (string, bool) {
	if filepath.IsAbs(p) {
		return "", false
	}
	clean := path.Clean(filepath.ToSlash(p))
	clean = strings.TrimPrefix(clean, "configs/")
	if strings.HasPrefix(clean, "../") || clean == ".." || path.Ext(clean) != ".yaml" {
		return "", false
	}
	return clean, true
}
