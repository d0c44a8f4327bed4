package outdir

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rated-dev/rated/internal/atomicfile"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// entries lists dir and its parent, so leftovers beside the set show up too.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, d := range []string{filepath.Dir(dir), dir} {
		es, _ := os.ReadDir(d)
		for _, e := range es {
			out = append(out, filepath.Join(filepath.Base(d), e.Name()))
		}
	}
	return out
}

var opts = Options{Command: "test", Owns: []string{"table.*", "runs"}}

func commitSet(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	s, err := Begin(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Abort()
	for name, content := range files {
		write(t, filepath.Join(s.Dir(), name), content)
	}
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
}

func TestCommitReplacesTheWholeSet(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	commitSet(t, dir, map[string]string{"table.md": "one", "runs/a.trec": "a", "runs/b.trec": "b"})
	commitSet(t, dir, map[string]string{"table.md": "two", "runs/a.trec": "a2"})
	if read(t, filepath.Join(dir, "table.md")) != "two" || read(t, filepath.Join(dir, "runs", "a.trec")) != "a2" {
		t.Fatal("new set not in place")
	}
	if _, err := os.Stat(filepath.Join(dir, "runs", "b.trec")); err == nil {
		t.Fatal("stale runs/b.trec of the earlier set survived")
	}
	m, err := ReadManifest(dir)
	if err != nil || len(m.Files) != 2 || m.Command != "test" {
		t.Fatalf("manifest %+v, %v", m, err)
	}
	// sha256("two") by hand: printf two | sha256sum
	if m.Files["table.md"] != "3fc4ccfe745870e2c0d99f71f30ff0656c8dedd41cc1d7d3d376b0dbe685e2f3" {
		t.Fatalf("table.md sha256 %s", m.Files["table.md"])
	}
	if err := Verify(dir); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "table.md"), "edited")
	if err := Verify(dir); err == nil || !strings.Contains(err.Error(), "changed after it was written") {
		t.Fatalf("Verify after an edit: %v", err)
	}
	got := fmt.Sprint(entries(t, dir))
	if strings.Contains(got, ".tmp-") || strings.Contains(got, ".old-") {
		t.Fatalf("leftovers: %s", got)
	}
}

// failAfter is a disk that fills up after n bytes: writes beyond it fail with ENOSPC.
type failAfter struct {
	w io.Writer
	n int
}

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k, _ := f.w.Write(p[:f.n])
		f.n = 0
		return k, &os.PathError{Op: "write", Path: "disk", Err: syscall.ENOSPC}
	}
	f.n -= len(p)
	return f.w.Write(p)
}

// TestDiskFullLeavesTheEarlierSet simulates a full disk at the writer of the third file of a
// set (after 10 bytes of it): the run fails, the earlier set is untouched, nothing is left over.
func TestDiskFullLeavesTheEarlierSet(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	commitSet(t, dir, map[string]string{"table.md": "old md", "table.json": "old json", "table.csv": "old csv"})
	before := entries(t, dir)
	s, err := Begin(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	var werr error
	for i, name := range []string{"table.md", "table.csv", "table.json"} {
		werr = atomicfile.Write(filepath.Join(s.Dir(), name), func(w io.Writer) error {
			if i == 2 {
				w = &failAfter{w: w, n: 10}
			}
			_, err := io.WriteString(w, strings.Repeat("new content ", 1000))
			return err
		})
		if werr != nil {
			break
		}
	}
	if !errors.Is(werr, syscall.ENOSPC) {
		t.Fatalf("write error %v", werr)
	}
	s.Abort()
	for name, want := range map[string]string{"table.md": "old md", "table.json": "old json", "table.csv": "old csv"} {
		if got := read(t, filepath.Join(dir, name)); got != want {
			t.Errorf("%s = %q, want the earlier %q", name, got, want)
		}
	}
	if after := entries(t, dir); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("entries changed: %v -> %v", before, after)
	}
	// A second set can be taken at once: Abort released the lock.
	commitSet(t, dir, map[string]string{"table.md": "new"})
}

func TestSecondRunIsRefusedWhileTheFirstHoldsTheLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	first, err := Begin(dir, Options{Command: "eval dynamic"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Begin(dir, Options{Command: "eval dynamic"})
	want := fmt.Sprintf("%s is in use by another rated run (rated eval dynamic, pid %d)", dir, os.Getpid())
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want %q", err, want)
	}
	first.Abort()
	if _, err := os.Stat(dir); err == nil {
		t.Fatal("Abort left the directory Begin created")
	}
	second, err := Begin(dir, Options{Command: "eval dynamic"})
	if err != nil {
		t.Fatalf("after Abort: %v", err)
	}
	second.Abort()
	// No lock file is left beside the output (one piled up per output directory ever used).
	if _, err := os.Stat(lockPath(dir)); !os.IsNotExist(err) {
		t.Errorf("lock file left after the run: %v", err)
	}
	// A lock taken on a lock file that was removed (and made again) since it was opened is not
	// the current one: Acquire takes it again.
	p := lockPath(dir)
	write(t, p, "")
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if same, err := lockedFileIsCurrent(f, p); err != nil || !same {
		t.Fatalf("the file itself: %v, %v", same, err)
	}
	os.Remove(p)
	if same, err := lockedFileIsCurrent(f, p); err != nil || same {
		t.Fatalf("after its removal: %v, %v", same, err)
	}
	write(t, p, "")
	if same, err := lockedFileIsCurrent(f, p); err != nil || same {
		t.Fatalf("after it was made again: %v, %v", same, err)
	}
}

// TestLeftoversOfAKilledRunAreRemoved: a run killed before its swap leaves its temporary set
// (and, with the two-rename fallback, the earlier set moved aside); the next run removes both.
func TestLeftoversOfAKilledRunAreRemoved(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	commitSet(t, dir, map[string]string{"table.md": "old"})
	write(t, filepath.Join(filepath.Dir(dir), ".out.tmp-123", "table.md"), "half")
	write(t, filepath.Join(filepath.Dir(dir), ".out.old-456", "table.md"), "older")
	commitSet(t, dir, map[string]string{"table.md": "new"})
	got := fmt.Sprint(entries(t, dir))
	if strings.Contains(got, ".tmp-") || strings.Contains(got, ".old-") {
		t.Fatalf("leftovers: %s", got)
	}
}

func TestForeignFilesAreRefused(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "notes.txt"), "mine")
	write(t, filepath.Join(dir, "table.md"), "legacy output")
	_, err := Begin(dir, opts)
	if err == nil || !strings.Contains(err.Error(), "notes.txt") || strings.Contains(err.Error(), "table.md") {
		t.Fatalf("error %v", err)
	}
	if read(t, filepath.Join(dir, "notes.txt")) != "mine" {
		t.Fatal("notes.txt changed")
	}
	// A directory of legacy output (no manifest, every entry one the command writes) is replaced.
	os.Remove(filepath.Join(dir, "notes.txt"))
	commitSet(t, dir, map[string]string{"table.md": "new"})
	if read(t, filepath.Join(dir, "table.md")) != "new" {
		t.Fatal("legacy set not replaced")
	}
	// A file as --out is refused.
	f := filepath.Join(t.TempDir(), "file")
	write(t, f, "x")
	if _, err := Begin(f, opts); err == nil || !strings.Contains(err.Error(), "is a file") {
		t.Fatalf("file as output: %v", err)
	}
}

// TestAnotherCommandsSetIsRefused: a set another command wrote (a benchmark, a model) is not
// replaced, however its files are named; a variant of the same command ("test --flag") may
// replace it.
func TestAnotherCommandsSetIsRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	commitSet(t, dir, map[string]string{"table.md": "the test's"})
	other := Options{Command: "build-bench", Owns: []string{"*"}, Keep: []string{"journal"}}
	if _, err := Begin(dir, other); err == nil || !strings.Contains(err.Error(), "holds the results of rated test, which rated build-bench would replace") {
		t.Fatalf("another command's set: %v", err)
	}
	if read(t, filepath.Join(dir, "table.md")) != "the test's" {
		t.Fatal("table.md changed")
	}
	variant := opts
	variant.Command = "test --retrieval-only"
	s, err := Begin(dir, variant)
	if err != nil {
		t.Fatalf("a variant of the same command: %v", err)
	}
	s.Abort()
}

// TestKeepCarriesResumeState: entries written in place (a journal) reach the new set as hard
// links of the same files, and are not listed with hashes in the manifest.
func TestKeepCarriesResumeState(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	ko := Options{Command: "build-bench", Keep: []string{"journal"}}
	for i, content := range []string{"first", "second"} {
		s, err := Begin(dir, ko)
		if err != nil {
			t.Fatal(err)
		}
		j := filepath.Join(s.Live("journal"), "syn.jsonl")
		if i == 0 {
			write(t, j, "record 1\n")
		} else {
			f, _ := os.OpenFile(j, os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString("record 2\n")
			f.Close()
		}
		write(t, filepath.Join(s.Dir(), "stats.json"), content)
		if err := s.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	if got := read(t, filepath.Join(dir, "journal", "syn.jsonl")); got != "record 1\nrecord 2\n" {
		t.Fatalf("journal %q", got)
	}
	m, _ := ReadManifest(dir)
	if len(m.Files) != 1 || m.Files["stats.json"] == "" || fmt.Sprint(m.Kept) != "[journal]" {
		t.Fatalf("manifest %+v", m)
	}
}

// TestSymlinkedOutReplacesTheTarget: --out naming a link writes into the link's target and
// leaves the link in place.
func TestSymlinkedOutReplacesTheTarget(t *testing.T) {
	target := filepath.Join(t.TempDir(), "real")
	commitSet(t, target, map[string]string{"table.md": "one"})
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	commitSet(t, link, map[string]string{"table.md": "two"})
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v", err)
	}
	if read(t, filepath.Join(target, "table.md")) != "two" {
		t.Fatal("target not updated")
	}
}

// TestWorkingDirectoryAndRootAreRefused runs from an empty directory, so that the refusal is the
// guard's and not the foreign-files check's (the package's directory holds its sources).
func TestWorkingDirectoryAndRootAreRefused(t *testing.T) {
	t.Chdir(filepath.Join(t.TempDir(), ""))
	os.Mkdir("sub", 0o755)
	t.Chdir("sub")
	wd, _ := os.Getwd()
	for _, d := range []string{".", wd, filepath.Dir(wd), "/"} {
		if _, err := Begin(d, opts); err == nil {
			t.Errorf("Begin(%q) accepted", d)
		}
	}
}

func TestHolds(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(root, "out")
	for _, d := range []string{out, filepath.Join(root, "elsewhere")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A link outside --out that points into it (an earlier run's --out exists).
	if err := os.Symlink(out, filepath.Join(root, "alias")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want bool
	}{
		{out, true},
		{filepath.Join(out, "dl"), true},
		{filepath.Join(out, "a", "b"), true},
		{filepath.Join(root, "alias", "dl"), true},
		{out + "-log", false},
		{filepath.Join(root, "elsewhere", "dl"), false},
		{root, false},
	} {
		got, err := Holds(out, c.path)
		if err != nil || got != c.want {
			t.Errorf("Holds(%s, %s) = %v, %v; want %v", out, c.path, got, err, c.want)
		}
	}
}

// TestKillBetweenTheFallbackRenamesLosesNothing: the two-rename swap moves --out aside, then the
// new set in; a run killed between them left --out missing, and the next Begin deleted both as
// leftovers. The complete new set (its manifest is written before the swap) is put in place;
// without one, the earlier set is put back.
func TestKillBetweenTheFallbackRenamesLosesNothing(t *testing.T) {
	for _, newComplete := range []bool{true, false} {
		dir := filepath.Join(t.TempDir(), "out")
		commitSet(t, dir, map[string]string{"table.md": "old"})
		if err := os.Rename(dir, filepath.Join(filepath.Dir(dir), ".out.old-123")); err != nil {
			t.Fatal(err)
		}
		stage := filepath.Join(filepath.Dir(dir), ".out.tmp-456")
		write(t, filepath.Join(stage, "table.md"), "new")
		want := "old"
		if newComplete {
			write(t, filepath.Join(stage, ManifestName), `{"command": "test", "files": {"table.md": "x"}}`)
			want = "new"
		}
		s, err := Begin(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		s.Abort()
		if got := read(t, filepath.Join(dir, "table.md")); got != want {
			t.Errorf("new set complete %v: table.md %q, want %q", newComplete, got, want)
		}
		if got := fmt.Sprint(entries(t, dir)); strings.Contains(got, ".tmp-") || strings.Contains(got, ".old-") {
			t.Errorf("leftovers: %s", got)
		}
	}
}

// TestLeftoversAreMatchedByName: --out "out[1]" globbed the live staging directory of another
// --out, out1, and removed it under that run.
func TestLeftoversAreMatchedByName(t *testing.T) {
	root := t.TempDir()
	other, err := Begin(filepath.Join(root, "out1"), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Abort()
	write(t, filepath.Join(other.Dir(), "table.md"), "running")
	s, err := Begin(filepath.Join(root, "out[1]"), opts)
	if err != nil {
		t.Fatal(err)
	}
	s.Abort()
	if err := other.Commit(); err != nil {
		t.Fatalf("the other run's set was touched: %v", err)
	}
}

// TestFilesInsideASetAreTheirOwners: a file a user put inside a set's folder (runs/notes.txt)
// was replaced with the set, since only top-level names were checked; a manifest that names no
// command is not rated's; and without a manifest only files the command writes are replaced,
// not folders (which could hold anything).
func TestFilesInsideASetAreTheirOwners(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	commitSet(t, dir, map[string]string{"table.md": "a", "runs/x.trec": "r"})
	write(t, filepath.Join(dir, "runs", "notes.txt"), "mine")
	if _, err := Begin(dir, opts); err == nil || !strings.Contains(err.Error(), "runs/notes.txt") {
		t.Fatalf("a user's file inside the set: %v", err)
	}
	for name, c := range map[string]struct{ manifest, foreign string }{
		"no command":    {`{"files": {"index.html": "x"}}`, "index.html"},
		"legacy folder": {"", "runs/notes.txt"},
	} {
		d := filepath.Join(t.TempDir(), "out")
		write(t, filepath.Join(d, "table.md"), "legacy")
		if c.manifest != "" {
			write(t, filepath.Join(d, ManifestName), c.manifest)
		}
		write(t, filepath.Join(d, filepath.FromSlash(c.foreign)), "mine")
		top, _, _ := strings.Cut(c.foreign, "/")
		_, err := Begin(d, opts)
		if err == nil || !strings.Contains(err.Error(), "holds "+top) {
			t.Errorf("%s: %v, want %s refused", name, err, top)
		}
	}
}

// TestCommittedSetKeepsTheMode: MkdirTemp's 0700 became --out's mode.
func TestCommittedSetKeepsTheMode(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if err := os.Mkdir(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	commitSet(t, dir, map[string]string{"table.md": "a"})
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o750 {
		t.Fatalf("mode after Commit: %v (%v), want 0750", st.Mode().Perm(), err)
	}
}

// TestCarriedEntriesStayInTheManifest: a partial rerun carries the earlier set's results over
// (build-bench --retrieval-only); as Keep entries they left the manifest, so Verify no longer
// covered them. Carry keeps them listed with their sha256.
func TestCarriedEntriesStayInTheManifest(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	commitSet(t, dir, map[string]string{"table.md": "a", "runs/x.trec": "r"})
	s, err := Begin(dir, Options{Command: "test --partial", Carry: []string{"runs"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Abort()
	write(t, filepath.Join(s.Dir(), "table.md"), "b")
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	m, err := ReadManifest(dir)
	if err != nil || m.Files["runs/x.trec"] == "" || m.Files["table.md"] == "" || len(m.Kept) != 0 {
		t.Fatalf("manifest %+v (%v): want runs/x.trec and table.md listed, nothing kept", m, err)
	}
	if read(t, filepath.Join(dir, "runs", "x.trec")) != "r" {
		t.Fatal("the carried file changed")
	}
	write(t, filepath.Join(dir, "runs", "x.trec"), "edited")
	if err := Verify(dir); err == nil || !strings.Contains(err.Error(), "x.trec") {
		t.Fatalf("Verify after editing a carried file: %v", err)
	}
}
