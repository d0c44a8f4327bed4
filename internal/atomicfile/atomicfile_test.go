package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
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

// TestCommitAllRestoresTheSetWhenARenameFails: the second target is a directory (found by a
// crawl whose --stats-out named one), so its rename fails after the first file was in place;
// the first gets its old content back, a first that did not exist is removed, and nothing is
// left beside them. A set whose renames all succeed is in place with no backups left.
func TestCommitAllRestoresTheSetWhenARenameFails(t *testing.T) {
	write := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	for _, existed := range []bool{true, false} {
		dir := t.TempDir()
		a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		if existed {
			WriteBytes(a, []byte("old a"))
		}
		if err := os.Mkdir(b, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(b, "inside"), nil, 0o644)
		pa, err1 := Prepare(a, write("new a"))
		pb, err2 := Prepare(b, write("new b"))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if err := CommitAll(pa, pb); err == nil {
			t.Fatalf("existed=%v: CommitAll over a directory succeeded", existed)
		}
		got, err := os.ReadFile(a)
		switch {
		case existed && string(got) != "old a":
			t.Errorf("a = %q (%v), want its old content back", got, err)
		case !existed && !errors.Is(err, os.ErrNotExist):
			t.Errorf("a = %q (%v), want it removed again", got, err)
		}
		entries, _ := os.ReadDir(dir)
		want := map[bool]int{true: 2, false: 1}[existed] // a (if it existed) and the directory b
		if len(entries) != want {
			t.Errorf("existed=%v: left behind %v", existed, entries)
		}
	}
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	WriteBytes(a, []byte("old a"))
	pa, _ := Prepare(a, write("new a"))
	pb, _ := Prepare(b, write("new b"))
	if err := CommitAll(pa, pb); err != nil {
		t.Fatal(err)
	}
	ga, _ := os.ReadFile(a)
	gb, _ := os.ReadFile(b)
	if entries, _ := os.ReadDir(dir); string(ga) != "new a" || string(gb) != "new b" || len(entries) != 2 {
		t.Fatalf("a = %q, b = %q, entries %v", ga, gb, entries)
	}
}

// TestCheckDir: an existing directory and a path below one pass; a path through a regular file
// fails naming that file, and nothing is created either way.
func TestCheckDir(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "afile")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, ok := range []string{root, filepath.Join(root, "new", "deeper")} {
		if err := CheckDir(ok); err != nil {
			t.Errorf("CheckDir(%s): %v", ok, err)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "new")); !os.IsNotExist(err) {
		t.Errorf("CheckDir created %s/new (%v)", root, err)
	}
	for dir, want := range map[string]string{file: file + " is not a directory", filepath.Join(file, "sub"): file + " is not a directory"} {
		if err := CheckDir(dir); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckDir(%s) = %v, want %q", dir, err, want)
		}
	}
}
