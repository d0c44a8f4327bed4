// Package crawl reads the published tool catalogs of agent platforms (LangChain, CrewAI,
// LlamaIndex, n8n) statically — from registry archives, unpacked source trees or bare git
// directories, never executing any crawled code — into catalog.Tool records, and health-checks
// their endpoints (Prober).
package crawl

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Limits bound what a crawl reads from one archive or tree, so a hostile or broken source cannot
// exhaust memory: a larger file is skipped with a warning.
type Limits struct {
	// MaxFileBytes is the largest single file read (nodes.json of n8n-nodes-base is ~9 MB).
	MaxFileBytes int64
	// MaxTotalBytes caps the bytes kept from one source.
	MaxTotalBytes int64
}

// DefaultLimits are generous for the real catalogs and still bounded.
func DefaultLimits() Limits { return Limits{MaxFileBytes: 64 << 20, MaxTotalBytes: 1 << 30} }

// Tree is the text content of one source (archive, directory or git revision) that a parser
// needs, keyed by slash-separated paths relative to the source root.
type Tree struct {
	// Label names the source in warnings and tool records (an archive path, a directory, git@rev).
	Label string
	// Files maps a clean relative path to its content.
	Files map[string][]byte
	// Warnings lists files skipped while reading (unsafe paths, binaries, oversized files).
	Warnings []string
	// Commit is the commit id read, for git sources.
	Commit string
}

// Paths returns the file paths in sorted order, so crawls are deterministic.
func (t *Tree) Paths() []string {
	ps := make([]string, 0, len(t.Files))
	for p := range t.Files {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	return ps
}

// Find returns the paths whose slash path ends with suffix (matched on a path-element boundary).
func (t *Tree) Find(suffix string) []string {
	var out []string
	for _, p := range t.Paths() {
		if p == suffix || strings.HasSuffix(p, "/"+suffix) {
			out = append(out, p)
		}
	}
	return out
}

func (t *Tree) warnf(format string, args ...any) {
	t.Warnings = append(t.Warnings, fmt.Sprintf(format, args...))
}

// textExtensions are the files a parser may read; everything else is ignored without a warning.
var textExtensions = map[string]bool{".py": true, ".json": true, ".js": true, ".ts": true, ".toml": true, ".cfg": true}

// wanted reports whether a path is one a parser may read.
func wanted(p string) bool {
	if strings.HasSuffix(p, "PKG-INFO") || strings.HasSuffix(p, "/METADATA") {
		return true
	}
	if strings.HasSuffix(p, ".map") || strings.HasSuffix(p, ".d.ts") {
		return false
	}
	return textExtensions[path.Ext(p)]
}

// safeRel cleans an archive member name and reports whether it stays inside the target root.
func safeRel(name string) (string, bool) {
	name = strings.ReplaceAll(name, "\\", "/")
	if strings.HasPrefix(name, "/") || (len(name) > 1 && name[1] == ':') {
		return "", false
	}
	c := path.Clean(name)
	if c == ".." || strings.HasPrefix(c, "../") || c == "." {
		return "", false
	}
	return c, true
}

// looksBinary reports whether data holds a NUL byte in its first 8 KiB or is not valid text.
func looksBinary(data []byte) bool {
	head := data
	if len(head) > 8192 {
		head = head[:8192]
	}
	return bytes.IndexByte(head, 0) >= 0
}

// add stores one member after the safety checks; it reads at most MaxFileBytes+1 bytes.
func (t *Tree) add(name string, size int64, r io.Reader, lim Limits, total *int64) {
	rel, ok := safeRel(name)
	if !ok {
		t.warnf("%s: skipped %q: path escapes the target directory", t.Label, name)
		return
	}
	if !wanted(rel) {
		return
	}
	if size > lim.MaxFileBytes {
		t.warnf("%s: skipped %s: %d bytes is over the %d-byte file limit", t.Label, rel, size, lim.MaxFileBytes)
		return
	}
	data, err := io.ReadAll(io.LimitReader(r, lim.MaxFileBytes+1))
	if err != nil {
		t.warnf("%s: skipped %s: %v", t.Label, rel, err)
		return
	}
	if int64(len(data)) > lim.MaxFileBytes {
		t.warnf("%s: skipped %s: over the %d-byte file limit", t.Label, rel, lim.MaxFileBytes)
		return
	}
	if looksBinary(data) {
		t.warnf("%s: skipped %s: binary content where text was expected", t.Label, rel)
		return
	}
	if *total+int64(len(data)) > lim.MaxTotalBytes {
		t.warnf("%s: skipped %s: source is over the %d-byte total limit", t.Label, rel, lim.MaxTotalBytes)
		return
	}
	*total += int64(len(data))
	t.Files[rel] = data
}

// LoadTree reads a source: a .whl/.zip, a .tgz/.tar.gz/.tar archive, a directory, or a bare git
// directory (read at rev with `git archive`, HEAD when rev is empty). Members that are unsafe
// (escaping paths, binaries, oversized) are skipped with a warning in Tree.Warnings.
func LoadTree(src, rev string, lim Limits) (*Tree, error) {
	st, err := os.Stat(src)
	if err != nil {
		return nil, fmt.Errorf("open source %s: %w", src, err)
	}
	t := &Tree{Label: src, Files: map[string][]byte{}}
	var total int64
	switch {
	case st.IsDir() && isBareGit(src):
		if rev == "" {
			rev = "HEAD"
		}
		t.Label = src + "@" + rev
		if err := t.readGit(src, rev, lim, &total); err != nil {
			return nil, err
		}
	case st.IsDir():
		err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				t.warnf("%s: skipped %s: %v", t.Label, p, err)
				return nil
			}
			if d.IsDir() {
				if n := d.Name(); p != src && (n == ".git" || n == "node_modules" || n == "__pycache__") {
					return filepath.SkipDir
				}
				return nil
			}
			rel, _ := filepath.Rel(src, p)
			rel = filepath.ToSlash(rel)
			if !d.Type().IsRegular() || !wanted(rel) {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				t.warnf("%s: skipped %s: %v", t.Label, rel, err)
				return nil
			}
			f, err := os.Open(p)
			if err != nil {
				t.warnf("%s: skipped %s: %v", t.Label, rel, err)
				return nil
			}
			defer f.Close()
			t.add(rel, info.Size(), f, lim, &total)
			return nil
		})
		if err != nil {
			return nil, err
		}
	case strings.HasSuffix(src, ".whl") || strings.HasSuffix(src, ".zip"):
		zr, err := zip.OpenReader(src)
		if err != nil {
			return nil, fmt.Errorf("open zip %s: %w", src, err)
		}
		defer zr.Close()
		for _, f := range zr.File {
			if f.FileInfo().IsDir() {
				continue
			}
			if !f.Mode().IsRegular() {
				if _, ok := safeRel(f.Name); !ok {
					t.warnf("%s: skipped %q: path escapes the target directory", t.Label, f.Name)
				}
				continue
			}
			rc, err := f.Open()
			if err != nil {
				t.warnf("%s: skipped %s: %v", t.Label, f.Name, err)
				continue
			}
			t.add(f.Name, int64(f.UncompressedSize64), rc, lim, &total)
			rc.Close()
		}
	case strings.HasSuffix(src, ".tgz") || strings.HasSuffix(src, ".tar.gz") || strings.HasSuffix(src, ".tar"):
		f, err := os.Open(src)
		if err != nil {
			return nil, fmt.Errorf("open archive %s: %w", src, err)
		}
		defer f.Close()
		var r io.Reader = f
		if !strings.HasSuffix(src, ".tar") {
			gz, err := gzip.NewReader(f)
			if err != nil {
				return nil, fmt.Errorf("open archive %s: %w", src, err)
			}
			defer gz.Close()
			r = gz
		}
		if err := t.readTar(r, lim, &total); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("source %s: not a directory, bare git directory, .whl/.zip or .tgz/.tar.gz/.tar archive", src)
	}
	return t, nil
}

func (t *Tree) readTar(r io.Reader, lim Limits, total *int64) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read archive %s: %w", t.Label, err)
		}
		switch h.Typeflag {
		case tar.TypeReg:
			t.add(h.Name, h.Size, tr, lim, total)
		case tar.TypeSymlink, tar.TypeLink:
			if _, ok := safeRel(h.Linkname); !ok || path.IsAbs(h.Linkname) {
				t.warnf("%s: skipped link %q -> %q: target escapes the target directory", t.Label, h.Name, h.Linkname)
			}
		default:
			if _, ok := safeRel(h.Name); !ok && h.Typeflag != tar.TypeXGlobalHeader {
				t.warnf("%s: skipped %q: path escapes the target directory", t.Label, h.Name)
			}
		}
	}
}

// readGit reads the wanted files of a git revision: `git ls-tree` lists them with their sizes
// and `git cat-file --batch` reads the blobs, so oversized files are never read and blobs missing
// from a partial clone or snapshot are skipped with a warning instead of failing the crawl.
func (t *Tree) readGit(gitDir, rev string, lim Limits, total *int64) error {
	git := func(stdin io.Reader, args ...string) ([]byte, error) {
		cmd := exec.Command("git", append([]string{"--git-dir", gitDir}, args...)...)
		cmd.Stdin = stdin
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("git --git-dir %s %s: %v: %s", gitDir, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
		}
		return out, nil
	}
	commit, err := git(nil, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if err != nil {
		return fmt.Errorf("read %s: no commit %q: %w", gitDir, rev, err)
	}
	t.Commit = strings.TrimSpace(string(commit))
	list, err := git(nil, "ls-tree", "-r", "-l", "-z", rev)
	if err != nil {
		return err
	}
	type entry struct {
		path string
		size int64
	}
	var want []entry
	var oids bytes.Buffer
	for _, rec := range bytes.Split(list, []byte{0}) {
		meta, p, ok := strings.Cut(string(rec), "\t")
		if !ok {
			continue
		}
		f := strings.Fields(meta) // mode type object size
		if len(f) != 4 || f[1] != "blob" || f[0] == "120000" {
			continue
		}
		rel, safe := safeRel(p)
		if !safe {
			t.warnf("%s: skipped %q: path escapes the target directory", t.Label, p)
			continue
		}
		if !wanted(rel) {
			continue
		}
		var size int64
		fmt.Sscan(f[3], &size)
		if size > lim.MaxFileBytes {
			t.warnf("%s: skipped %s: %d bytes is over the %d-byte file limit", t.Label, rel, size, lim.MaxFileBytes)
			continue
		}
		want = append(want, entry{rel, size})
		oids.WriteString(f[2] + "\n")
	}
	if len(want) == 0 {
		return nil
	}
	out, err := git(&oids, "cat-file", "--batch")
	if err != nil {
		return err
	}
	for _, e := range want {
		header, rest, ok := bytes.Cut(out, []byte("\n"))
		if !ok {
			return fmt.Errorf("read %s: git cat-file output ends early at %s", t.Label, e.path)
		}
		f := strings.Fields(string(header))
		if len(f) == 2 && f[1] == "missing" {
			t.warnf("%s: skipped %s: object missing from the repository", t.Label, e.path)
			out = rest
			continue
		}
		var size int64
		if len(f) != 3 {
			return fmt.Errorf("read %s: unexpected git cat-file header %q", t.Label, header)
		}
		fmt.Sscan(f[2], &size)
		if int64(len(rest)) < size+1 {
			return fmt.Errorf("read %s: git cat-file output truncated at %s", t.Label, e.path)
		}
		t.add(e.path, size, bytes.NewReader(rest[:size]), lim, total)
		out = rest[size+1:]
	}
	return nil
}

// isBareGit reports whether dir looks like a git directory (HEAD, objects/ and refs/).
func isBareGit(dir string) bool {
	for _, n := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			return false
		}
	}
	return true
}
