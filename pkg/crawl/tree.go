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
	"context"
	"errors"
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

// Limits bound what a crawl reads from one archive or tree, so a hostile or broken source (a
// decompression bomb) cannot exhaust memory or run for ever: members are checked against them
// from their declared sizes before anything is decompressed, and skipped with a warning; an
// archive that expands past MaxArchiveBytes is an error. Peak memory is about MaxTotalBytes plus
// one file.
//
// The pinned sources of configs/sources.yaml measured (go test ./pkg/crawl -run
// TestPinnedSourcesFitTheLimits): largest file 8.8 MB (nodes.json of n8n-nodes-base), most kept
// from one source 60 MB, most decompressed from one archive 105 MB, highest compression ratio of
// a zip member over 64 KiB 7.4.
type Limits struct {
	// MaxFileBytes is the largest single file read.
	MaxFileBytes int64
	// MaxTotalBytes caps the bytes kept from one source.
	MaxTotalBytes int64
	// MaxArchiveBytes caps the bytes decompressed from one .tgz/.tar.gz stream, kept or skipped.
	MaxArchiveBytes int64
	// MaxRatio caps uncompressed/compressed size of a zip member over 1 MiB.
	MaxRatio float64
}

// DefaultLimits are generous for the real catalogs (4 to 13 times the measured figures above)
// and still bounded.
func DefaultLimits() Limits {
	return Limits{MaxFileBytes: 64 << 20, MaxTotalBytes: 256 << 20, MaxArchiveBytes: 1 << 30, MaxRatio: 100}
}

// withDefaults fills the zero fields of l from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = d.MaxFileBytes
	}
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = d.MaxTotalBytes
	}
	if l.MaxArchiveBytes <= 0 {
		l.MaxArchiveBytes = d.MaxArchiveBytes
	}
	if l.MaxRatio <= 0 {
		l.MaxRatio = d.MaxRatio
	}
	return l
}

// Tree is the text content of one source (archive, directory or git revision) that a parser
// needs, keyed by slash-separated paths relative to the source root.
type Tree struct {
	// Label names the source in warnings and tool records (an archive path, a directory, git@rev).
	Label string
	// Files maps a clean relative path to its content.
	Files map[string][]byte
	// Warnings lists files skipped while reading (unsafe paths, binaries, oversized files).
	Warnings []string
	// Skipped maps the path of each file a parser would have read but that was skipped to why,
	// so a parser missing a file can say what became of it.
	Skipped map[string]string
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

// skip records a wanted file that is not read, and why.
func (t *Tree) skip(rel, why string) {
	if t.Skipped == nil {
		t.Skipped = map[string]string{}
	}
	t.Skipped[rel] = why
	t.warnf("%s: skipped %s: %s", t.Label, rel, why)
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

// admit reports whether a member of declared size may be read: its path is safe and one a
// parser reads, and it fits the file and total limits. Members are checked before they are
// opened (a zip member's decompressor is not even allocated otherwise).
func (t *Tree) admit(name string, size int64, lim Limits, total int64) (string, bool) {
	rel, ok := safeRel(name)
	switch {
	case !ok:
		t.warnf("%s: skipped %q: path escapes the target directory", t.Label, name)
		return "", false
	case !wanted(rel):
		return "", false
	case size < 0:
		t.skip(rel, fmt.Sprintf("declared size %d", size))
		return "", false
	case size > lim.MaxFileBytes:
		t.skip(rel, fmt.Sprintf("%d bytes is over the %d-byte file limit", size, lim.MaxFileBytes))
		return "", false
	case total+size > lim.MaxTotalBytes:
		t.skip(rel, fmt.Sprintf("source is over the %d-byte total limit", lim.MaxTotalBytes))
		return "", false
	}
	return rel, true
}

// add stores one member of declared size after the checks of admit. Its buffer is allocated
// once at the declared size, and the first 8 KiB are checked for binary content before the rest
// is read, so memory stays within the limits whatever the member holds.
func (t *Tree) add(name string, size int64, r io.Reader, lim Limits, total *int64) {
	rel, ok := t.admit(name, size, lim, *total)
	if !ok {
		return
	}
	buf := make([]byte, size+1) // one byte more: a member longer than declared is noticed
	head := min(size+1, 8192)
	n, err := io.ReadFull(r, buf[:head])
	if err == nil || err == io.ErrUnexpectedEOF || err == io.EOF {
		if looksBinary(buf[:n]) {
			t.skip(rel, "binary content where text was expected")
			return
		}
		if n == int(head) && head < size+1 {
			var m int
			m, err = io.ReadFull(r, buf[head:])
			n += m
		}
	}
	switch {
	case err != nil && err != io.ErrUnexpectedEOF && err != io.EOF:
		t.skip(rel, err.Error())
		return
	case int64(n) > size:
		t.skip(rel, fmt.Sprintf("longer than its declared %d bytes", size))
		return
	}
	data := buf[:n:n]
	if looksBinary(data) {
		t.skip(rel, "binary content where text was expected")
		return
	}
	*total += int64(len(data))
	t.Files[rel] = data
}

// LoadTree reads a source: a .whl/.zip, a .tgz/.tar.gz/.tar archive, a directory, or a bare git
// directory (read at rev with `git ls-tree` and `git cat-file`, HEAD when rev is empty). Members
// that are unsafe (escaping paths, binaries, oversized) are skipped with a warning in
// Tree.Warnings. Cancelling ctx stops the git processes of a bare git source.
func LoadTree(ctx context.Context, src, rev string, lim Limits) (*Tree, error) {
	st, err := os.Stat(src)
	if err != nil {
		return nil, fmt.Errorf("open source %s: %w", src, err)
	}
	t := &Tree{Label: src, Files: map[string][]byte{}}
	lim = lim.withDefaults()
	var total int64
	switch {
	case st.IsDir() && isBareGit(src):
		if rev == "" {
			rev = "HEAD"
		}
		t.Label = src + "@" + rev
		if err := t.readGit(ctx, src, rev, lim, &total); err != nil {
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
			size := int64(min(f.UncompressedSize64, 1<<62))
			rel, ok := t.admit(f.Name, size, lim, total)
			if !ok {
				continue
			}
			if size > 1<<20 && (f.CompressedSize64 == 0 || float64(size) > lim.MaxRatio*float64(f.CompressedSize64)) {
				// A decompression bomb: real members compress 10 times at most.
				t.skip(rel, fmt.Sprintf("compression ratio %.0f (%d bytes from %d) is over the limit of %.0f",
					float64(size)/float64(max(f.CompressedSize64, 1)), size, f.CompressedSize64, lim.MaxRatio))
				continue
			}
			rc, err := f.Open()
			if err != nil {
				t.warnf("%s: skipped %s: %v", t.Label, f.Name, err)
				continue
			}
			t.add(f.Name, size, rc, lim, &total)
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
			r = &boundedReader{r: gz, left: lim.MaxArchiveBytes, label: src}
		}
		if err := t.readTar(r, lim, &total); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("source %s: not a directory, bare git directory, .whl/.zip or .tgz/.tar.gz/.tar archive", src)
	}
	return t, nil
}

// CheckSource refuses, without reading it, a source LoadTree cannot read: one that does not
// exist, a file that is not a .whl/.zip or .tgz/.tar.gz/.tar archive, or a revision on anything
// but a bare git directory (it was ignored: a worktree's checked-out files were crawled).
func CheckSource(src, rev string) error {
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	switch {
	case st.IsDir() && isBareGit(src):
		return nil
	case rev != "":
		if isBareGit(filepath.Join(src, ".git")) {
			return fmt.Errorf("a revision needs a git directory: give %s@%s", filepath.Join(src, ".git"), rev)
		}
		return fmt.Errorf("a revision (@%s) needs a bare git directory; %s is not one", rev, src)
	case st.IsDir():
		return nil
	}
	for _, ext := range []string{".whl", ".zip", ".tgz", ".tar.gz", ".tar"} {
		if strings.HasSuffix(src, ext) {
			return nil
		}
	}
	return errors.New("not a directory, bare git directory, .whl/.zip or .tgz/.tar.gz/.tar archive")
}

// boundedReader fails once more than left bytes were read: an archive stream that expands past
// the limit is a decompression bomb, refused however little of it is kept.
type boundedReader struct {
	r     io.Reader
	left  int64
	label string
	limit int64
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.limit == 0 {
		b.limit = b.left
	}
	if b.left <= 0 {
		return 0, fmt.Errorf("archive %s expands to more than %d bytes: refused as a possible decompression bomb", b.label, b.limit)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
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
func (t *Tree) readGit(ctx context.Context, gitDir, rev string, lim Limits, total *int64) error {
	git := func(stdin io.Reader, args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, "git", append([]string{"--git-dir", gitDir}, args...)...)
		// A partial clone fetches missing blobs from its promisor remote on demand: the crawl
		// reads what is on disk and nothing else (GIT_NO_LAZY_FETCH, git 2.44 on; older gits
		// ignore it, and their fetch fails without a network, which is reported).
		cmd.Env = append(os.Environ(), "GIT_NO_LAZY_FETCH=1")
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
	var listed int64
	for _, e := range parseLsTree(list) {
		rel, safe := safeRel(e.path)
		if !safe {
			t.warnf("%s: skipped %q: path escapes the target directory", t.Label, e.path)
			continue
		}
		if !wanted(rel) {
			continue
		}
		if e.size > lim.MaxFileBytes {
			t.skip(rel, fmt.Sprintf("%d bytes is over the %d-byte file limit", e.size, lim.MaxFileBytes))
			continue
		}
		// cat-file's output holds every wanted blob at once: bound it by the total limit.
		if listed+e.size > lim.MaxTotalBytes {
			t.skip(rel, fmt.Sprintf("source is over the %d-byte total limit", lim.MaxTotalBytes))
			continue
		}
		listed += e.size
		want = append(want, entry{rel, e.size})
		oids.WriteString(e.oid + "\n")
	}
	if len(want) == 0 {
		return nil
	}
	out, err := git(&oids, "cat-file", "--batch")
	if err != nil {
		return err
	}
	blobs, err := catFileBlobs(out, len(want))
	if err != nil {
		return fmt.Errorf("read %s: %w", t.Label, err)
	}
	for i, e := range want {
		if blobs[i] == nil {
			t.warnf("%s: skipped %s: object missing from the repository", t.Label, e.path)
			continue
		}
		t.add(e.path, int64(len(blobs[i])), bytes.NewReader(blobs[i]), lim, total)
	}
	return nil
}

// lsTreeEntry is one blob of `git ls-tree -r -l -z` output.
type lsTreeEntry struct {
	path, oid string
	size      int64
}

// parseLsTree reads `git ls-tree -r -l -z` output ("mode type object size\tpath" records
// separated by NUL), keeping regular blobs (not symbolic links or submodules); malformed records
// are skipped.
func parseLsTree(list []byte) []lsTreeEntry {
	var out []lsTreeEntry
	for _, rec := range bytes.Split(list, []byte{0}) {
		meta, p, ok := strings.Cut(string(rec), "\t")
		if !ok {
			continue
		}
		f := strings.Fields(meta) // mode type object size
		if len(f) != 4 || f[1] != "blob" || f[0] == "120000" {
			continue
		}
		// The size is "BAD" (or "-") when the object is missing from the store: cat-file then
		// says so, and the file is skipped with a warning.
		var size int64
		if _, err := fmt.Sscan(f[3], &size); err != nil || size < 0 {
			size = 0
		}
		out = append(out, lsTreeEntry{path: p, oid: f[2], size: size})
	}
	return out
}

// catFileBlobs splits `git cat-file --batch` output ("oid type size\n<content>\n" per object,
// or "name missing\n") into the contents of n objects, in order; nil marks a missing object.
func catFileBlobs(out []byte, n int) ([][]byte, error) {
	blobs := make([][]byte, n)
	for i := range n {
		header, rest, ok := bytes.Cut(out, []byte("\n"))
		if !ok {
			return nil, fmt.Errorf("git cat-file output ends early at object %d", i+1)
		}
		f := strings.Fields(string(header))
		if len(f) == 2 && f[1] == "missing" {
			out = rest
			continue
		}
		var size int64
		if len(f) != 3 {
			return nil, fmt.Errorf("unexpected git cat-file header %q", header)
		}
		if _, err := fmt.Sscan(f[2], &size); err != nil || size < 0 {
			return nil, fmt.Errorf("unexpected git cat-file header %q", header)
		}
		if int64(len(rest)) <= size { // compared without size+1, which could overflow
			return nil, fmt.Errorf("git cat-file output truncated at object %d", i+1)
		}
		blobs[i] = rest[:size:size]
		out = rest[size+1:]
	}
	return blobs, nil
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
