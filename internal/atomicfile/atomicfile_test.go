package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteKeepsOldContentOnError(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	if err := WriteBytes(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	err := Write(path, func(w io.Writer) error {
		io.WriteString(w, "half-written")
		return errors.New("boom")
	})
	if err == nil {
		t.Fatal("expected an error")
	}
	got, _ := os.ReadFile(path)
	if string(got) != "old" {
		t.Fatalf("content = %q, want old content", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temporary file left behind: %v", entries)
	}
}

func TestWriteCreatesDirectories(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "c.txt")
	if err := WriteBytes(path, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "x" {
		t.Fatalf("got %q", got)
	}
}

// TestPrepareCommitsTogether: two prepared files leave both targets untouched until committed,
// and Discard leaves no temporary file.
func TestPrepareCommitsTogether(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	WriteBytes(a, []byte("old a"))
	pa, err := Prepare(a, func(w io.Writer) error { _, err := io.WriteString(w, "new a"); return err })
	if err != nil {
		t.Fatal(err)
	}
	_, err = Prepare(b, func(w io.Writer) error { return errors.New("disk full") })
	if err == nil {
		t.Fatal("expected an error")
	}
	pa.Discard()
	if got, _ := os.ReadFile(a); string(got) != "old a" {
		t.Fatalf("a = %q", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
	pa, _ = Prepare(a, func(w io.Writer) error { _, err := io.WriteString(w, "new a"); return err })
	pb, _ := Prepare(b, func(w io.Writer) error { _, err := io.WriteString(w, "new b"); return err })
	if got, _ := os.ReadFile(a); string(got) != "old a" {
		t.Fatal("a replaced before Commit")
	}
	if pa.Commit() != nil || pb.Commit() != nil {
		t.Fatal("commit failed")
	}
	if got, _ := os.ReadFile(b); string(got) != "new b" {
		t.Fatalf("b = %q", got)
	}
}
