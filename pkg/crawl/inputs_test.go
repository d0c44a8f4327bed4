package crawl

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/rated-dev/rated/internal/outdir"
)

// writeRawZip writes a zip of n members named pkg/mNN.py, each holding data, compressing data
// once and reusing the stream (fast even for a large bomb).
func writeRawZip(t testing.TB, path string, n int, data []byte) {
	t.Helper()
	var comp bytes.Buffer
	fw, _ := flate.NewWriter(&comp, flate.BestCompression)
	fw.Write(data)
	fw.Close()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for i := 0; i < n; i++ {
		w, err := zw.CreateRaw(&zip.FileHeader{Name: fmt.Sprintf("pkg/m%02d.py", i), Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(data),
			CompressedSize64: uint64(comp.Len()), UncompressedSize64: uint64(len(data))})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(comp.Bytes())
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// allocatedBy returns the bytes allocated while f runs.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestZipBombIsRefusedWithoutReadingIt (issue 16): a small zip of highly compressed members (a
// 1.5 MB bomb of 24 × 60 MiB members peaked at 1.9 GB of memory on this machine) is skipped
// member by member on its compression ratio, before anything is decompressed.
func TestZipBombIsRefusedWithoutReadingIt(t *testing.T) {
	bomb := filepath.Join(t.TempDir(), "bomb.whl")
	writeRawZip(t, bomb, 16, bytes.Repeat([]byte("a"), 8<<20)) // 128 MiB from about 130 KB
	var tr *Tree
	var err error
	alloc := allocatedBy(func() {
		tr, err = LoadTree(context.Background(), bomb, "", Limits{MaxFileBytes: 16 << 20, MaxTotalBytes: 32 << 20})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Files) != 0 {
		t.Errorf("kept %d members of the bomb", len(tr.Files))
	}
	if w := strings.Join(tr.Warnings, "\n"); strings.Count(w, "compression ratio") != 16 {
		t.Errorf("warnings do not name the compression ratio of each member:\n%s", w)
	}
	if alloc > 4<<20 {
		t.Errorf("reading the bomb allocated %d MiB, want under 4", alloc>>20)
	}
}

// TestTotalLimitBoundsMemory: members of a plausible ratio past the total limit are skipped
// from their declared size, not read and then dropped: memory stays near the limit.
func TestTotalLimitBoundsMemory(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"def ", "return ", "self", ".value", " = ", "(x)", "\n", "    ", "tool", "name"}
	var b strings.Builder
	for b.Len() < 1<<20 {
		b.WriteString(words[rng.IntN(len(words))])
	}
	src := filepath.Join(t.TempDir(), "big.whl")
	writeRawZip(t, src, 20, []byte(b.String()))
	var tr *Tree
	var err error
	alloc := allocatedBy(func() {
		tr, err = LoadTree(context.Background(), src, "", Limits{MaxFileBytes: 2 << 20, MaxTotalBytes: 4 << 20})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Files) != 3 { // 3 × (1 MiB + a few bytes) fit under 4 MiB
		t.Errorf("kept %d members, want 3", len(tr.Files))
	}
	if alloc > 8<<20 {
		t.Errorf("allocated %d MiB for a 4 MiB limit", alloc>>20)
	}
}

// TestBinaryNodesJSONIsNamed (issue 16): a binary dist/types/nodes.json was reported as
// missing; the error now says it was skipped and why.
func TestBinaryNodesJSONIsNamed(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "package", "dist", "types"), 0o755)
	os.WriteFile(filepath.Join(dir, "package", "dist", "types", "nodes.json"), []byte("\x00\x01binary"), 0o644)
	tr, err := LoadTree(context.Background(), dir, "", DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	_, err = CrawlN8n([]*Tree{tr})
	if err == nil || !strings.Contains(err.Error(), "package/dist/types/nodes.json") || !strings.Contains(err.Error(), "binary") || strings.Contains(err.Error(), "no dist/types/nodes.json") {
		t.Fatalf("error %v", err)
	}
}

// TestNoToolsShowsWhy (issue 16): "crawl found no tools" hid the per-node warnings that explain
// it; the error now carries them.
func TestNoToolsShowsWhy(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "package", "dist", "types"), 0o755)
	os.WriteFile(filepath.Join(dir, "package", "dist", "types", "nodes.json"), []byte(`[{"displayName": "A"}, 7]`), 0o644)
	_, err := Run(context.Background(), RunOptions{Options: Options{Platforms: []string{"n8n"}, Local: map[string][]LocalSource{"n8n": {{Path: dir}}}}})
	if err == nil || !strings.Contains(err.Error(), "no tools") || !strings.Contains(err.Error(), "node 0 skipped") || !strings.Contains(err.Error(), "node 1 skipped") {
		t.Fatalf("error %v", err)
	}
}

// TestPinnedSourcesFitTheLimits measures the pinned real sources against DefaultLimits (the
// figures in the Limits doc comment): no file of theirs is skipped, and each measure keeps at
// least 4 times headroom.
func TestPinnedSourcesFitTheLimits(t *testing.T) {
	opts := pinnedOptions(t)
	lim := DefaultLimits()
	var maxFile, maxKept, maxRead int64
	maxRatio := 0.0
	for _, p := range Platforms {
		for _, s := range opts.Config.Platforms[p] {
			path := filepath.Join(opts.Fetcher.Dir, s.CacheName())
			tr, err := LoadTree(context.Background(), path, "", lim)
			if err != nil {
				t.Fatal(err)
			}
			if len(tr.Skipped) > 0 {
				t.Errorf("%s: skipped %v", path, tr.Skipped)
			}
			var kept int64
			for _, d := range tr.Files {
				kept += int64(len(d))
				maxFile = max(maxFile, int64(len(d)))
			}
			maxKept = max(maxKept, kept)
			if strings.HasSuffix(path, ".whl") {
				zr, err := zip.OpenReader(path)
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range zr.File {
					if f.UncompressedSize64 > 64<<10 {
						maxRatio = max(maxRatio, float64(f.UncompressedSize64)/float64(f.CompressedSize64))
					}
				}
				zr.Close()
				continue
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			gz, err := gzip.NewReader(f)
			if err != nil {
				t.Fatal(err)
			}
			n, _ := io.Copy(io.Discard, gz)
			f.Close()
			maxRead = max(maxRead, n)
		}
	}
	t.Logf("largest file %d, most kept %d, most decompressed %d, highest zip ratio %.1f", maxFile, maxKept, maxRead, maxRatio)
	if 4*maxFile > lim.MaxFileBytes || 4*maxKept > lim.MaxTotalBytes || 4*maxRead > lim.MaxArchiveBytes || 4*maxRatio > lim.MaxRatio {
		t.Errorf("less than 4 times headroom: limits %+v", lim)
	}
}

// TestTgzExpandingPastTheLimitIsRefused: a gzip stream is bounded as a whole, skipped members
// included (they are decompressed to be skipped).
func TestTgzExpandingPastTheLimitIsRefused(t *testing.T) {
	tgz := filepath.Join(t.TempDir(), "bomb.tgz")
	writeTgz(t, tgz, []member{{name: "package/a.bin", body: strings.Repeat("a", 3<<20)}, {name: "package/ok.py", body: "x = 1\n"}})
	_, err := LoadTree(context.Background(), tgz, "", Limits{MaxArchiveBytes: 1 << 20})
	if err == nil || !strings.Contains(err.Error(), "decompression bomb") || !strings.Contains(err.Error(), tgz) {
		t.Fatalf("error %v", err)
	}
	if _, err := LoadTree(context.Background(), tgz, "", Limits{MaxArchiveBytes: 8 << 20}); err != nil {
		t.Fatalf("under the limit: %v", err)
	}
}

// TestRunWritesCatalogAndStatsTogether (issue 16): the catalog and the stats file are one
// output set: when the stats cannot be written the earlier catalog stays, and a second crawl
// into the same catalog while one runs is refused.
func TestRunWritesCatalogAndStatsTogether(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "catalog.jsonl")
	os.WriteFile(out, []byte("old catalog\n"), 0o644)
	blocker := filepath.Join(dir, "blocker")
	os.WriteFile(blocker, []byte("a file where a directory is needed"), 0o644)
	ro := RunOptions{Options: Options{Platforms: []string{"n8n"}, Local: map[string][]LocalSource{"n8n": {{Path: "testdata/n8n"}}}},
		Out: out, StatsOut: filepath.Join(blocker, "stats.json")}
	if _, err := Run(context.Background(), ro); err == nil {
		t.Fatal("no error writing stats under a file")
	}
	if data, _ := os.ReadFile(out); string(data) != "old catalog\n" {
		t.Fatalf("the catalog was replaced although its stats were not written:\n%.200s", data)
	}
	lock, err := outdir.Acquire(out, "crawl")
	if err != nil {
		t.Fatal(err)
	}
	ro.StatsOut = ""
	if _, err := Run(context.Background(), ro); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("crawl while another holds %s: %v", out, err)
	}
	lock.Release()
	if _, err := Run(context.Background(), ro); err != nil {
		t.Fatal(err)
	}
}

// TestRunChecksBeforeWork: each of these used to be found only after n8n had been crawled (in
// real use, after downloads), or never: an unknown platform, a local source that does not
// exist, a source for a platform not crawled (ignored silently), a platform with nothing to
// crawl, a directory as the stats file, and --out and --stats-out naming one file. None may
// write or lock anything, and none may reach the fetcher (its cache must stay empty).
func TestRunChecksBeforeWork(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "catalog.jsonl")
	cache := filepath.Join(dir, "cache")
	n8n := map[string][]LocalSource{"n8n": {{Path: "testdata/n8n"}}}
	cfg := &SourcesConfig{Platforms: map[string][]Source{}}
	cases := map[string]struct {
		ro   RunOptions
		want string
	}{
		"unknown platform": {RunOptions{Options: Options{Platforms: []string{"n8n", "bogus"}, Local: n8n}, Out: out}, `--platform "bogus"`},
		"missing source": {RunOptions{Options: Options{Platforms: []string{"n8n", "langchain"}, Local: map[string][]LocalSource{
			"n8n": {{Path: "testdata/n8n"}}, "langchain": {{Path: filepath.Join(dir, "nonexistent")}}}}, Out: out}, "--source langchain=" + filepath.Join(dir, "nonexistent")},
		"source not crawled": {RunOptions{Options: Options{Platforms: []string{"n8n"}, Local: map[string][]LocalSource{
			"n8n": {{Path: "testdata/n8n"}}, "langchain": {{Path: "testdata/n8n"}}}}, Out: out}, "platform langchain is not crawled"},
		"nothing to crawl":     {RunOptions{Options: Options{Platforms: []string{"n8n", "crewai"}, Local: n8n, Config: cfg, Fetcher: &Fetcher{Dir: cache}}, Out: out}, "crawl crewai: no sources configured"},
		"stats is a directory": {RunOptions{Options: Options{Platforms: []string{"n8n"}, Local: n8n}, Out: out, StatsOut: dir}, "--stats-out " + dir + ": is a directory"},
		"one file for both":    {RunOptions{Options: Options{Platforms: []string{"n8n"}, Local: n8n}, Out: out, StatsOut: filepath.Join(dir, ".", "catalog.jsonl")}, "both name"},
	}
	for name, c := range cases {
		if _, err := Run(context.Background(), c.ro); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", name, err, c.want)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Fatalf("%s: left %v in the output directory", name, entries)
		}
	}
}

// TestSourcesTypoIsRefused: a misspelt key (versoin) used to be ignored, so the source had no
// version and the crawl took another package than the one pinned; unknown keys and platforms
// are errors naming them.
func TestSourcesTypoIsRefused(t *testing.T) {
	for body, want := range map[string]string{
		"platforms:\n  n8n:\n    - {registry: npm, package: x, versoin: 1.0.0, kind: npm}\n": "versoin",
		"platfroms:\n  n8n: []\n": "platfroms",
		"platforms:\n  zapier:\n    - {registry: npm, package: x, version: 1.0.0, kind: npm}\n": "zapier",
	} {
		if _, err := ParseSources("s.yaml", []byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want it to name %s", body, err, want)
		}
	}
}

// TestCatFileSizeOutOfRange: a negative or overflowing size in git cat-file output is an error
// (it used to panic slicing the output). FuzzGitListing did not reach it in 60 s; it was found
// by reading catFileBlobs, and the inputs are now seeds of the target too.
func TestCatFileSizeOutOfRange(t *testing.T) {
	for _, out := range []string{"abc blob -5\nxx\n", "abc blob 9223372036854775807\nxx\n", "abc blob 3\nxx"} {
		if _, err := catFileBlobs([]byte(out), 1); err == nil {
			t.Errorf("%q: no error", out)
		}
	}
	blobs, err := catFileBlobs([]byte("abc blob 2\nxx\ndef missing\n"), 2)
	if err != nil || string(blobs[0]) != "xx" || blobs[1] != nil {
		t.Fatalf("%q, %v", blobs, err)
	}
}
