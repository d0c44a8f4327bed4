package outdir

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// swap puts stage in the place of final and returns where the earlier set now is (to be
// removed). On Linux both directories trade places in one renameat2(RENAME_EXCHANGE), so final
// never stops existing; file systems without it fall back to two renames.
func swap(stage, final string) (string, error) {
	err := unix.Renameat2(unix.AT_FDCWD, stage, unix.AT_FDCWD, final, unix.RENAME_EXCHANGE)
	switch {
	case err == nil:
		return stage, nil
	case errors.Is(err, unix.ENOENT):
		return stage, os.Rename(stage, final)
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.ENOTSUP):
		return swapByRenames(stage, final)
	}
	return "", err
}
