// Package testfs gives tests a small file system that really fills up: a tmpfs of a given size
// mounted on a temporary directory, so that "disk full" is the kernel's ENOSPC and not a fake.
// Mounting needs root (CAP_SYS_ADMIN), which CI and the development machines have; elsewhere
// the test is skipped with a hint, or fails under RATED_REQUIRE_ASSETS=1 so a green CI means
// the check ran.
package testfs

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/rated-dev/rated/internal/testassets"
)

// Tmpfs mounts a tmpfs of size bytes on a new temporary directory and unmounts it when the test
// ends.
func Tmpfs(t testing.TB, size int64) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tmpfs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "size="+strconv.FormatInt(size, 10)); err != nil {
		if testassets.Required() {
			t.Fatalf("mount a %d-byte tmpfs for the disk-full check: %v (RATED_REQUIRE_ASSETS=1; run as root)", size, err)
		}
		t.Skipf("mount a %d-byte tmpfs for the disk-full check: %v (needs root)", size, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// Fill writes a file into dir until the file system is full, leaving about keep bytes free,
// and returns its path (remove it to free the space again).
func Fill(t testing.TB, dir string, keep int64) string {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	free := int64(st.Bavail) * st.Bsize
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for left := free - keep; left > 0; {
		n := min(int64(len(buf)), left)
		if _, err := f.Write(buf[:n]); err != nil {
			break // full already
		}
		left -= n
	}
	return path
}
