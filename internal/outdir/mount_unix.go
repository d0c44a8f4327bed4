//go:build unix

package outdir

import (
	"os"
	"path/filepath"
	"syscall"
)

// mountPoint reports whether dir is a mount point (its device differs from its parent's): a
// directory another file system is mounted on cannot be renamed, so the swap would fail at
// Commit, after the work.
func mountPoint(dir string) bool {
	a, errA := os.Stat(dir)
	b, errB := os.Stat(filepath.Dir(dir))
	if errA != nil || errB != nil {
		return false
	}
	sa, okA := a.Sys().(*syscall.Stat_t)
	sb, okB := b.Sys().(*syscall.Stat_t)
	return okA && okB && sa.Dev != sb.Dev
}
