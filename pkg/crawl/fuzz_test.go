package crawl

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rated-dev/rated/pkg/catalog"

	"github.com/rated-dev/rated/internal/fuzzcount"
	"github.com/rated-dev/rated/internal/testassets"
)

// FuzzParsePython: any input either parses or returns an error; it never panics or hangs.
func FuzzParsePython(f *testing.F) {
	for _, seed := range []string{
		"class A(B):\n    name: str = 'x'\n    description = (\"a\" \"b\")\n",
		"x = f'{a}' + \"b\"\nfrom .m import (a as b,\n c)\n",
		"def f(a, b=1, *c, **d) -> int:\n    \"\"\"doc\"\"\"\n    return {'mode': 'x', 'name': y}\n",
		"class A:\n  if x:\n    y = 1\n  else:\n    y = 2\n",
		"x = '''unterminated\n", "(\n", "class\n", "def f(\n", "@\n", "x = {", "x: int", "EnvVar(",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		fuzzcount.Tick("FuzzParsePython")
		m, err := parsePython("f.py", "pkg.f", false, src)
		if err == nil && m == nil {
			t.Fatal("nil module without error")
		}
	})
}

// FuzzCrawlN8n feeds dist/types/nodes.json and credentials.json (seeds: the n8n fixture,
// testdata/fuzz/FuzzCrawlN8n; an excerpt of the pinned n8n-nodes-base when installed). Any input
// is an error naming the source, or tools that are valid catalog records with distinct ids.
func FuzzCrawlN8n(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join(testassets.Home(f).SourcesDir(), "npm", "n8n-nodes-base-2.41.2.tgz")); err == nil {
		if tr, err := loadTreeBytes(data, ".tgz", DefaultLimits()); err == nil {
			var nodes []json.RawMessage
			if json.Unmarshal(tr.Files["package/dist/types/nodes.json"], &nodes) == nil && len(nodes) > 40 {
				excerpt, _ := json.Marshal(nodes[:40])
				f.Add(excerpt, tr.Files["package/dist/types/credentials.json"])
			}
		}
	}
	f.Fuzz(func(t *testing.T, nodes, creds []byte) {
		fuzzcount.Tick("FuzzCrawlN8n")
		tr := &Tree{Label: "src", Files: map[string][]byte{"package/dist/types/nodes.json": nodes, "package/dist/types/credentials.json": creds,
			"package/package.json": []byte(`{"name":"n8n-nodes-test","version":"1.0.0"}`)}}
		res, err := CrawlN8n([]*Tree{tr})
		if err != nil {
			if !strings.Contains(err.Error(), "src") {
				t.Fatalf("error names no source: %v", err)
			}
			return
		}
		checkTools(t, res.Tools)
	})
}

func checkTools(t *testing.T, tools []catalog.Tool) {
	t.Helper()
	seen := map[string]bool{}
	for i := range tools {
		if err := tools[i].Validate(); err != nil || seen[tools[i].ID] {
			t.Fatalf("tool %+v: %v (duplicate %v)", tools[i], err, seen[tools[i].ID])
		}
		seen[tools[i].ID] = true
	}
	if err := catalog.EncodeJSONL(io.Discard, tools); err != nil {
		t.Fatalf("crawled tools do not encode: %v", err)
	}
}

// FuzzJSEndpoints feeds compiled n8n node code (seeds: the fixture's .js files,
// testdata/fuzz/FuzzJSEndpoints): every endpoint found is an http(s) URL.
func FuzzJSEndpoints(f *testing.F) {
	f.Fuzz(func(t *testing.T, src []byte) {
		fuzzcount.Tick("FuzzJSEndpoints")
		for _, ep := range jsEndpoints(src) {
			if !strings.HasPrefix(ep.URL, "https://") && !strings.HasPrefix(ep.URL, "http://") {
				t.Fatalf("endpoint %q", ep.URL)
			}
		}
	})
}

// loadTreeBytes writes an archive to a temporary file with the given extension and reads it.
func loadTreeBytes(data []byte, ext string, lim Limits) (*Tree, error) {
	dir, err := os.MkdirTemp("", "fuzz-tree-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "src"+ext)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		return nil, err
	}
	return LoadTree(context.Background(), p, "", lim)
}

// fuzzLimits are small, so the fuzzer reaches them.
var fuzzLimits = Limits{MaxFileBytes: 4096, MaxTotalBytes: 16384, MaxArchiveBytes: 1 << 20, MaxRatio: 100}

// checkTree: every kept path is clean and relative, every file within the limits.
func checkTree(t *testing.T, tr *Tree) {
	t.Helper()
	var total int64
	for p, data := range tr.Files {
		if rel, ok := safeRel(p); !ok || rel != p || !wanted(p) {
			t.Fatalf("kept path %q", p)
		}
		if int64(len(data)) > fuzzLimits.MaxFileBytes || looksBinary(data) {
			t.Fatalf("kept %s: %d bytes", p, len(data))
		}
		total += int64(len(data))
	}
	if total > fuzzLimits.MaxTotalBytes {
		t.Fatalf("kept %d bytes", total)
	}
}

// FuzzLoadTreeZip feeds a wheel or zip (seeds: a wheel of the LlamaIndex fixture,
// testdata/fuzz/FuzzLoadTreeZip; a pinned wheel when installed).
func FuzzLoadTreeZip(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join(testassets.Home(f).SourcesDir(), "pypi", "llama-index-tools-weather-0.6.0.whl")); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzcount.Tick("FuzzLoadTreeZip")
		tr, err := loadTreeBytes(data, ".whl", fuzzLimits)
		if err == nil {
			checkTree(t, tr)
		}
	})
}

// FuzzLoadTreeTar feeds a .tgz (seeds: the n8n fixture packed as npm does,
// testdata/fuzz/FuzzLoadTreeTar); the same bytes are also read as a plain .tar.
func FuzzLoadTreeTar(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzcount.Tick("FuzzLoadTreeTar")
		for _, ext := range []string{".tgz", ".tar"} {
			tr, err := loadTreeBytes(data, ext, fuzzLimits)
			if err == nil {
				checkTree(t, tr)
			}
		}
	})
}

// FuzzGitListing feeds `git ls-tree -r -l -z` and `git cat-file --batch` output (seed: a
// two-blob tree with a link and a submodule, testdata/fuzz/FuzzGitListing): entries are regular
// blobs, and the blobs split out are sub-slices of the output, never a panic.
func FuzzGitListing(f *testing.F) {
	f.Fuzz(func(t *testing.T, ls, cat []byte) {
		fuzzcount.Tick("FuzzGitListing")
		entries := parseLsTree(ls)
		for _, e := range entries {
			if e.path == "" && e.oid == "" {
				t.Fatalf("empty entry from %q", ls)
			}
		}
		blobs, err := catFileBlobs(cat, len(entries)+1)
		if err != nil {
			return
		}
		n := 0
		for _, b := range blobs {
			n += len(b)
		}
		if n > len(cat) {
			t.Fatalf("%d blob bytes from %d bytes of output", n, len(cat))
		}
	})
}

// FuzzParseSources feeds a sources file (seed: configs/sources.yaml,
// testdata/fuzz/FuzzParseSources): any input is an error naming the file, or sources of known
// platforms whose names and versions are safe to hand to npm and pip.
func FuzzParseSources(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzcount.Tick("FuzzParseSources")
		cfg, err := ParseSources("s.yaml", data)
		if err != nil {
			if !strings.Contains(err.Error(), "s.yaml") {
				t.Fatalf("error names no file: %v", err)
			}
			return
		}
		for plat, srcs := range cfg.Platforms {
			if !knownPlatform(plat) {
				t.Fatalf("platform %q", plat)
			}
			for _, s := range srcs {
				if s.validate() != nil || strings.HasPrefix(s.Package, "-") || strings.HasPrefix(s.Version, "-") {
					t.Fatalf("source %+v", s)
				}
			}
		}
	})
}

// FuzzOpenProbeJournal: any journal is an error naming the file, or results that each have a
// URL and a status, with a torn last line cut off so the next append starts on a fresh line.
func FuzzOpenProbeJournal(f *testing.F) {
	f.Add([]byte(`{"status":"reachable","url":"http://a.test/v1","http_code":200,"checked_at":"2026-05-01T11:00:00Z"}` + "\n" + `{"status":"bro`))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzcount.Tick("FuzzOpenProbeJournal")
		path := filepath.Join(t.TempDir(), "j.jsonl")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		j, done, err := OpenProbeJournal(path)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error names no file: %v", err)
			}
			return
		}
		defer j.Close()
		for u, r := range done {
			if u == "" || r.URL != u || r.Status == "" {
				t.Fatalf("result %+v under %q", r, u)
			}
		}
		kept, _ := os.ReadFile(path)
		if len(kept) > 0 && kept[len(kept)-1] != '\n' {
			t.Fatalf("the journal does not end on a newline after opening: %q", kept)
		}
	})
}
