package crawl

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

type member struct {
	name, body, link string
	typ              byte
}

func writeTgz(t *testing.T, path string, members []member) {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, m := range members {
		typ := m.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		h := &tar.Header{Name: m.name, Mode: 0o644, Size: int64(len(m.body)), Typeflag: typ, Linkname: m.link}
		if typ != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if typ == tar.TypeReg {
			tw.Write([]byte(m.body))
		}
	}
	tw.Close()
	gz.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Unsafe members are skipped with a warning naming them; the safe ones are read.
func TestLoadTreeArchiveSafety(t *testing.T) {
	dir := t.TempDir()
	tgz := filepath.Join(dir, "pkg.tgz")
	writeTgz(t, tgz, []member{
		{name: "package/ok.py", body: "x = 1\n"},
		{name: "../escape.py", body: "evil = 1\n"},
		{name: "/abs/path.py", body: "evil = 1\n"},
		{name: "package/../../up.json", body: "{}"},
		{name: "package/bin.py", body: "a\x00b"},
		{name: "package/huge.json", body: strings.Repeat("x", 2000)},
		{name: "package/link.py", typ: tar.TypeSymlink, link: "../../etc/passwd"},
		{name: "package/image.png", body: "\x89PNG\x00"},
	})
	tr, err := LoadTree(context.Background(), tgz, "", Limits{MaxFileBytes: 1000, MaxTotalBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tr.Paths(), []string{"package/ok.py"}) {
		t.Errorf("paths = %v", tr.Paths())
	}
	for _, want := range []string{`"../escape.py"`, `"/abs/path.py"`, `"package/../../up.json"`, "package/bin.py: binary", "package/huge.json: 2000 bytes", `link "package/link.py"`} {
		found := false
		for _, w := range tr.Warnings {
			if strings.Contains(w, want) {
				found = true
			}
		}
		if !found {
			t.Errorf("no warning mentions %s: %v", want, tr.Warnings)
		}
	}
	if len(tr.Warnings) != 6 {
		t.Errorf("warnings = %d, want 6 (the .png is ignored silently): %v", len(tr.Warnings), tr.Warnings)
	}
}

func TestLoadTreeZipSafetyAndTotalLimit(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x-1.0-py3-none-any.whl")
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range []struct{ name, body string }{
		{"pkg/a.py", strings.Repeat("a", 600)},
		{"../../evil.py", "x"},
		{"pkg/b.py", strings.Repeat("b", 600)},
	} {
		w, _ := zw.Create(f.name)
		w.Write([]byte(f.body))
	}
	zw.Close()
	os.WriteFile(p, buf.Bytes(), 0o644)
	tr, err := LoadTree(context.Background(), p, "", Limits{MaxFileBytes: 1000, MaxTotalBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tr.Paths(), []string{"pkg/a.py"}) || len(tr.Warnings) != 2 ||
		!strings.Contains(tr.Warnings[0], "escapes") || !strings.Contains(tr.Warnings[1], "total limit") {
		t.Errorf("paths %v warnings %v", tr.Paths(), tr.Warnings)
	}
}

func TestLoadTreeErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadTree(context.Background(), filepath.Join(dir, "missing"), "", DefaultLimits()); err == nil {
		t.Error("missing source: no error")
	}
	odd := filepath.Join(dir, "file.rar")
	os.WriteFile(odd, []byte("x"), 0o644)
	if _, err := LoadTree(context.Background(), odd, "", DefaultLimits()); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("unknown format: %v", err)
	}
	bad := filepath.Join(dir, "bad.tgz")
	os.WriteFile(bad, []byte("not gzip"), 0o644)
	if _, err := LoadTree(context.Background(), bad, "", DefaultLimits()); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("corrupt archive: %v", err)
	}
}

// A bare git directory is read at any revision with git archive.
func TestLoadTreeBareGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	os.MkdirAll(filepath.Join(work, "langchain_community/tools/x"), 0o755)
	os.WriteFile(filepath.Join(work, "langchain_community/tools/x/tool.py"), []byte("class A(BaseTool):\n    name: str = \"first\"\n"), 0o644)
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "one")
	first := git("rev-parse", "HEAD")
	os.WriteFile(filepath.Join(work, "langchain_community/tools/x/tool.py"), []byte("class A(BaseTool):\n    name: str = \"second\"\n"), 0o644)
	git("commit", "-q", "-am", "two")
	bare := filepath.Join(dir, "repo.git")
	if out, err := exec.Command("git", "clone", "-q", "--bare", work, bare).CombinedOutput(); err != nil {
		t.Fatalf("clone: %v %s", err, out)
	}
	for rev, want := range map[string]string{"": "second", first: "first"} {
		tr, err := LoadTree(context.Background(), bare, rev, DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		res, err := CrawlLangChain([]*Tree{tr})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Tools) != 1 || res.Tools[0].Name != want {
			t.Fatalf("rev %q: tools %+v, want name %q", rev, res.Tools, want)
		}
		if rev == first && (tr.Commit != first || res.Tools[0].Version != "git:"+first[:12]) {
			t.Errorf("rev %q: commit %q version %q", rev, tr.Commit, res.Tools[0].Version)
		}
	}
	if _, err := LoadTree(context.Background(), bare, "no-such-rev", DefaultLimits()); err == nil || !strings.Contains(err.Error(), "no-such-rev") {
		t.Errorf("bad rev: %v", err)
	}
	// A cancelled crawl starts no git process: the read fails instead of returning a tree.
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if tr, err := LoadTree(cancelled, bare, "", DefaultLimits()); err == nil {
		t.Errorf("cancelled context read %d files", len(tr.Files))
	}
	// A blob missing from the object store (a partial snapshot) is skipped with a warning.
	os.WriteFile(filepath.Join(work, "langchain_community/tools/x/gone.py"), []byte("gone = 1\n"), 0o644)
	git("add", ".")
	git("commit", "-q", "-m", "three")
	oid := git("rev-parse", "HEAD:langchain_community/tools/x/gone.py")
	if err := os.Remove(filepath.Join(work, ".git", "objects", oid[:2], oid[2:])); err != nil {
		t.Fatal(err)
	}
	tr, err := LoadTree(context.Background(), filepath.Join(work, ".git"), "", DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tr.Files["langchain_community/tools/x/tool.py"]; !ok || len(tr.Warnings) != 1 || !strings.Contains(tr.Warnings[0], "gone.py: object missing") {
		t.Errorf("files %v warnings %v", tr.Paths(), tr.Warnings)
	}
}
