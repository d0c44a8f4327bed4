// Package outdir writes a command's output set as a whole: the files go into a temporary
// directory beside --out, and Commit swaps it with --out in one rename, so a reader, a full disk
// or a kill -9 at any moment leaves either the earlier set or the new one, complete, never a mix
// and never stale files of an earlier run. A lock beside --out refuses a second concurrent run
// with a clear message. Resume state that must outlive a run (build-bench's journal/,
// finetune's checkpoints/) is written in place and carried into the new set by hard links.
//
// Every set holds manifest.json, listing its files with their sha256, written last before the
// swap. An existing --out is only replaced when everything in it was written by rated (listed in
// its manifest, or named by the command's Owns patterns); anything else is refused, so a mistyped
// --out never empties a directory of someone's files.
package outdir

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rated-dev/rated/internal/atomicfile"
)

// ManifestName is the file every set holds at its top.
const ManifestName = "manifest.json"

// Options describe the command writing a set.
type Options struct {
	// Command names the writer ("eval dynamic") in the manifest and in lock refusals.
	Command string
	// Owns are path.Match patterns of the top-level names the command writes; an existing --out
	// without a manifest (written before manifests existed) is replaced only when every entry is
	// a file matching one (or a Keep entry): a folder could hold anything.
	Owns []string
	// Keep are the top-level names written in place during the run (Live) and carried into the
	// new set at Commit, such as resume journals and checkpoints.
	Keep []string
	// Carry are top-level names of the earlier set carried into the new one unchanged (hard
	// links, as Keep) but, unlike Keep, listed in its manifest with their sha256: results a
	// partial rerun does not rewrite (build-bench --retrieval-only carries the benchmark).
	Carry []string
}

// Manifest is the content of manifest.json.
type Manifest struct {
	Command string `json:"command"`
	// Files maps each file of the set (slash path) to its hex sha256; Kept entries are left out,
	// since they change as later runs resume.
	Files map[string]string `json:"files"`
	Kept  []string          `json:"kept,omitempty"`
}

// Set is an output directory being written. Write into Dir, then Commit; Abort (deferred) drops
// an unfinished set and releases the lock.
type Set struct {
	final, stage string
	opts         Options
	lock         *Lock
	created      bool
	done         bool
}

// Begin locks dir (refusing when another run holds it), removes what killed runs left beside
// it, checks that dir holds only rated's output, creates it when missing (for Keep entries) and
// returns a set whose files go to a fresh temporary directory beside it.
func Begin(dir string, opts Options) (_ *Set, err error) {
	final, err := resolve(dir)
	if err != nil {
		return nil, err
	}
	lock, err := Acquire(final, opts.Command)
	if err != nil {
		return nil, err
	}
	s := &Set{final: final, opts: opts, lock: lock}
	defer func() {
		if err != nil {
			s.Abort()
		}
	}()
	if err := removeStale(final); err != nil {
		return nil, err
	}
	if err := checkOwned(final, opts); err != nil {
		return nil, err
	}
	if mountPoint(final) {
		return nil, fmt.Errorf("output directory %s is a mount point: the new set is swapped into place by a rename, which a mount point refuses; choose a directory inside it", final)
	}
	if _, err := os.Stat(final); errors.Is(err, fs.ErrNotExist) {
		if err := os.Mkdir(final, 0o755); err != nil {
			return nil, fmt.Errorf("create %s: %w", final, err)
		}
		s.created = true
	}
	if s.stage, err = os.MkdirTemp(filepath.Dir(final), "."+filepath.Base(final)+".tmp-"); err != nil {
		return nil, fmt.Errorf("create a temporary directory beside %s: %w", final, err)
	}
	// MkdirTemp makes it 0700, and it becomes --out: give it --out's own mode (the umask's 0755
	// for a new one), so a shared results folder stays readable.
	if st, err := os.Stat(final); err == nil {
		if err := os.Chmod(s.stage, st.Mode().Perm()); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// resolve makes dir absolute, follows symbolic links (AbsReal: the set replaces a link's
// target, not the link), and refuses directories whose replacement would pull the ground from
// under the process: the file system root and the working directory or one above it.
func resolve(dir string) (string, error) {
	if dir == "" {
		return "", errors.New("no output directory given")
	}
	abs, err := AbsReal(dir)
	if err != nil {
		return "", err
	}
	if filepath.Dir(abs) == abs {
		return "", fmt.Errorf("output directory %s: the file system root cannot be an output set", dir)
	}
	if wd, err := os.Getwd(); err == nil {
		if real, err := filepath.EvalSymlinks(wd); err == nil {
			wd = real
		}
		if wd == abs || strings.HasPrefix(wd, abs+string(filepath.Separator)) {
			return "", fmt.Errorf("output directory %s holds the working directory: choose a directory below it", dir)
		}
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return "", fmt.Errorf("output directory %s: %w", dir, err)
	}
	return abs, nil
}

// Holds reports whether path lies inside the output directory dir (or is it), after making both
// absolute and following symbolic links where they exist. A command refuses such a path for a
// file it writes beside its set (a decision log, say): Commit replaces dir as a whole, so
// anything written there outside the set is lost.
func Holds(dir, path string) (bool, error) {
	d, err := AbsReal(dir)
	if err != nil {
		return false, err
	}
	p, err := AbsReal(path)
	if err != nil {
		return false, err
	}
	return p == d || strings.HasPrefix(p, d+string(filepath.Separator)), nil
}

// AbsReal makes p absolute and follows symbolic links in its longest existing prefix, as Begin
// resolves an output directory.
func AbsReal(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for cur := abs; ; {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(real, rest), nil
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// leftovers are what killed runs left beside final: temporary sets (".NAME.tmp-*") and earlier
// sets moved aside by the two-rename fallback (".NAME.old-*"), matched by exact prefix (a glob
// of the name took "out[1]" for a pattern and matched another --out's live staging directory).
func leftovers(final string) (tmp, old []string) {
	dir, base := filepath.Dir(final), "."+filepath.Base(final)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		switch n := e.Name(); {
		case strings.HasPrefix(n, base+".tmp-"):
			tmp = append(tmp, filepath.Join(dir, n))
		case strings.HasPrefix(n, base+".old-"):
			old = append(old, filepath.Join(dir, n))
		}
	}
	return tmp, old
}

// RemoveUnfinished removes what an unfinished set of final left when its run cannot abort it
// itself (an interrupted command that does not stop): the temporary set beside final, and final
// when the run created it and it is still empty. It touches nothing while another process
// holds final's lock.
func RemoveUnfinished(final string, created bool) error {
	if !heldHere(final) {
		l, err := Acquire(final, "cleanup")
		if err != nil {
			return nil // another run holds it: its files are not ours
		}
		defer l.Release()
	}
	stage, _ := leftovers(final)
	for _, s := range stage {
		if err := os.RemoveAll(s); err != nil {
			return fmt.Errorf("remove the unfinished output set %s: %w", s, err)
		}
	}
	if created {
		os.Remove(final) // only when empty: resume state written in place (Keep) stays
	}
	return nil
}

// removeStale removes what killed runs left beside final (under final's lock: no live run's).
// A run killed between the two renames of the fallback swap left final missing, its earlier
// set as .old-* and its new one, complete (the manifest is written before the swap), as .tmp-*:
// the new set is put in place (or, without one, the earlier set put back) before the rest goes.
func removeStale(final string) error {
	tmp, old := leftovers(final)
	if _, err := os.Lstat(final); errors.Is(err, fs.ErrNotExist) && len(old) > 0 {
		restore := ""
		for _, t := range tmp {
			if _, err := os.Stat(filepath.Join(t, ManifestName)); err == nil {
				restore = t
			}
		}
		if restore == "" {
			restore = old[len(old)-1]
		}
		if err := os.Rename(restore, final); err != nil {
			return fmt.Errorf("put back the output set %s that an interrupted run left at %s: %w", final, restore, err)
		}
		tmp, old = leftovers(final)
	}
	for _, m := range append(tmp, old...) {
		if err := os.RemoveAll(m); err != nil {
			return fmt.Errorf("remove %s left by an interrupted run: %w", m, err)
		}
	}
	return nil
}

// checkOwned refuses an existing final holding anything rated did not write.
func checkOwned(final string, opts Options) error {
	st, err := os.Stat(final)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("output directory %s is a file", final)
	}
	var foreign []string
	if m, err := ReadManifest(final); err == nil && m.Command != "" {
		// Another command's set is its user's results (a benchmark, a model), not this run's
		// to replace.
		if baseCommand(m.Command) != baseCommand(opts.Command) {
			return fmt.Errorf("output directory %s holds the results of rated %s, which rated %s would replace as a whole: choose another output directory",
				final, m.Command, opts.Command)
		}
		// Every file must be one the set listed (or under an entry it keeps): a file a user put
		// inside the set, even in one of its folders, is not rated's to delete.
		err := filepath.WalkDir(final, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(final, p)
			rel = filepath.ToSlash(rel)
			top, _, _ := strings.Cut(rel, "/")
			switch {
			case rel == ".":
				return nil
			case slices.Contains(m.Kept, top) || slices.Contains(opts.Keep, top):
				if d.IsDir() && rel == top {
					return filepath.SkipDir
				}
				return nil
			case d.IsDir():
				return nil
			case rel == ManifestName:
				return nil
			}
			if _, ok := m.Files[rel]; !ok {
				foreign = append(foreign, rel)
			}
			return nil
		})
		if err != nil {
			return err
		}
	} else {
		// No manifest (a set written before manifests existed), or one that names no command
		// (not rated's): only top-level files the command writes (Owns) and its Keep entries
		// may be replaced; a folder could hold anything.
		entries, err := os.ReadDir(final)
		if err != nil {
			return err
		}
		for _, e := range entries {
			name := e.Name()
			if slices.Contains(opts.Keep, name) || e.Type().IsRegular() && slices.ContainsFunc(opts.Owns, func(p string) bool {
				ok, _ := path.Match(p, name)
				return ok
			}) {
				continue
			}
			foreign = append(foreign, name)
		}
	}
	if len(foreign) > 0 {
		if len(foreign) > 3 {
			foreign = append(foreign[:3], fmt.Sprintf("and %d more", len(foreign)-3))
		}
		return fmt.Errorf("output directory %s holds %s, which rated %s did not write: move it away or choose another output directory (the whole directory is replaced by the new results)",
			final, strings.Join(foreign, ", "), opts.Command)
	}
	return nil
}

// baseCommand is a command name without its flags ("build-bench --retrieval-only" →
// "build-bench"): variants of one command may replace each other's sets.
func baseCommand(c string) string {
	base, _, _ := strings.Cut(c, " --")
	return base
}

// Dir is where the new set's files are written.
func (s *Set) Dir() string { return s.stage }

// Final is the output directory itself.
func (s *Set) Final() string { return s.final }

// Live is the path of a Keep entry, written in place during the run.
func (s *Set) Live(name string) string { return filepath.Join(s.final, name) }

// Commit carries the Keep entries over, writes the manifest, syncs the set and swaps it into
// place, then removes the earlier set and releases the lock.
func (s *Set) Commit() error {
	if s.done {
		return errors.New("outdir: set already committed or aborted")
	}
	for _, k := range slices.Concat(s.opts.Keep, s.opts.Carry) {
		src := filepath.Join(s.final, k)
		if _, err := os.Lstat(src); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err := linkTree(src, filepath.Join(s.stage, k)); err != nil {
			return fmt.Errorf("carry %s into the new output set: %w", src, err)
		}
	}
	m := Manifest{Command: s.opts.Command, Files: map[string]string{}}
	for _, k := range s.opts.Keep {
		if _, err := os.Lstat(filepath.Join(s.stage, k)); err == nil {
			m.Kept = append(m.Kept, k)
		}
	}
	if err := s.hashAndSync(&m); err != nil {
		return err
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteBytes(filepath.Join(s.stage, ManifestName), append(data, '\n')); err != nil {
		return err
	}
	if err := syncDir(s.stage); err != nil {
		return err
	}
	old, err := swap(s.stage, s.final)
	if err != nil {
		return fmt.Errorf("put the new output set in place at %s: %w", s.final, err)
	}
	s.done = true
	defer s.lock.Release()
	if err := os.RemoveAll(old); err != nil {
		return fmt.Errorf("remove the earlier output set (moved to %s): %w", old, err)
	}
	return syncDir(filepath.Dir(s.final))
}

// hashAndSync records every file of the stage (Keep entries aside) in m and fsyncs every
// directory, so the renames inside it are durable before the swap.
func (s *Set) hashAndSync(m *Manifest) error {
	return filepath.WalkDir(s.stage, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(s.stage, p)
		rel = filepath.ToSlash(rel)
		if top, _, _ := strings.Cut(rel, "/"); slices.Contains(m.Kept, top) {
			if d.IsDir() && rel == top {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return syncDir(p)
		}
		if rel == ManifestName || !d.Type().IsRegular() {
			return nil
		}
		sum, err := fileSHA256(p)
		if err != nil {
			return err
		}
		m.Files[rel] = sum
		return nil
	})
}

// Abort removes the unfinished set and releases the lock; after Commit it does nothing. A --out
// created by Begin is removed again when still empty.
func (s *Set) Abort() {
	if s.done {
		return
	}
	s.done = true
	if s.stage != "" {
		os.RemoveAll(s.stage)
	}
	if s.created {
		os.Remove(s.final) // only when empty
	}
	s.lock.Release()
}

// ReadManifest reads dir/manifest.json.
func ReadManifest(dir string) (*Manifest, error) {
	data, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestName), err)
	}
	return &m, nil
}

// Verify checks that dir holds every file its manifest lists, with the listed sha256.
func Verify(dir string) error {
	m, err := ReadManifest(dir)
	if err != nil {
		return err
	}
	for _, p := range slices.Sorted(maps.Keys(m.Files)) {
		sum, err := fileSHA256(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil {
			return fmt.Errorf("%s: listed in %s: %w", p, ManifestName, err)
		}
		if sum != m.Files[p] {
			return fmt.Errorf("%s: sha256 %s, but %s lists %s: the set was changed after it was written", filepath.Join(dir, p), sum, ManifestName, m.Files[p])
		}
	}
	return nil
}

// linkTree recreates the directories of src under dst and hard-links its files, so the data is
// shared, not copied, and a crash at any point leaves src whole.
func linkTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		default:
			return os.Link(p, target)
		}
	})
}

func fileSHA256(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
