package outdir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// swapByRenames moves final aside, then stage into its place.
func swapByRenames(stage, final string) (string, error) {
	old, err := os.MkdirTemp(filepath.Dir(final), "."+filepath.Base(final)+".old-")
	if err != nil {
		return "", err
	}
	if err := os.Remove(old); err != nil { // only its unique name is wanted
		return "", err
	}
	if err := os.Rename(final, old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if err := os.Rename(stage, final); err != nil {
		os.Rename(old, final)
		return "", err
	}
	return old, nil
}
