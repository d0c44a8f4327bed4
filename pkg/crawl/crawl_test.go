package crawl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rated-dev/rated/internal/testassets"
	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/provenance"
)

func TestLoadSourcesPinnedFile(t *testing.T) {
	cfg, err := LoadSources(filepath.Join(testassets.Root(t), "configs", "sources.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range Platforms {
		if len(cfg.Platforms[p]) == 0 {
			t.Errorf("no pinned sources for %s", p)
		}
		for _, s := range cfg.Platforms[p] {
			if s.Version == "" {
				t.Errorf("%s: %s is not pinned", p, s.Package)
			}
		}
	}
}

func TestLoadSourcesRejectsBadEntries(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		"registry": "platforms:\n  n8n:\n    - {registry: maven, package: x, version: 1, kind: npm}\n",
		"package":  "platforms:\n  n8n:\n    - {registry: npm, package: \"x; rm -rf /\", version: 1, kind: npm}\n",
		"version":  "platforms:\n  n8n:\n    - {registry: npm, package: x, version: \"--exec\", kind: npm}\n",
		"kind":     "platforms:\n  n8n:\n    - {registry: pypi, package: x, version: 1, kind: npm}\n",
		"yaml":     "platforms: [\n",
	}
	for name, body := range cases {
		p := filepath.Join(dir, name+".yaml")
		os.WriteFile(p, []byte(body), 0o644)
		if _, err := LoadSources(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v should name %s", name, err, p)
		}
	}
}

func TestSourceCacheName(t *testing.T) {
	cases := []struct {
		s    Source
		want string
	}{
		{Source{Registry: "npm", Package: "@n8n/n8n-nodes-langchain", Version: "2.41.1", Kind: "npm"}, "npm/n8n+n8n-nodes-langchain-2.41.1.tgz"},
		{Source{Registry: "pypi", Package: "crewai-tools", Version: "1.15.30", Kind: "sdist"}, "pypi/crewai-tools-1.15.30.tar.gz"},
		{Source{Registry: "pypi", Package: "langchain-community", Version: "0.4.2", Kind: "wheel"}, "pypi/langchain-community-0.4.2.whl"},
	}
	for _, c := range cases {
		if got := filepath.ToSlash(c.s.CacheName()); got != c.want {
			t.Errorf("CacheName(%+v) = %s, want %s", c.s, got, c.want)
		}
	}
}

// The fetcher runs the registry client once, caches under the canonical name, and turns a
// failing client into an error with the local-tree hint.
func TestFetcherCachesAndHints(t *testing.T) {
	dir := t.TempDir()
	var calls [][]string
	run := func(_ context.Context, wd, name string, args ...string) ([]byte, error) {
		calls = append(calls, append([]string{name}, args...))
		if strings.Contains(strings.Join(args, " "), "broken") {
			return nil, errors.New("connection refused")
		}
		if name == "npm" && args[0] == "view" {
			return []byte("3.0.0\n"), nil
		}
		if name == "python3" && args[2] == "index" {
			return []byte("somepkg (1.2.3)\nAvailable versions: 1.2.3, 1.2.2\n"), nil
		}
		return nil, os.WriteFile(filepath.Join(wd, "downloaded-file"), []byte("archive"), 0o644)
	}
	f := &Fetcher{Dir: dir, Run: run}
	src := Source{Registry: "npm", Package: "n8n-nodes-base", Version: "2.41.2", Kind: "npm"}
	for i := 0; i < 2; i++ {
		p, err := f.Fetch(context.Background(), src)
		if err != nil {
			t.Fatal(err)
		}
		if p != filepath.Join(dir, "npm", "n8n-nodes-base-2.41.2.tgz") {
			t.Errorf("path = %s", p)
		}
	}
	if len(calls) != 1 || strings.Join(calls[0], " ") != "npm pack --silent n8n-nodes-base@2.41.2" {
		t.Errorf("calls = %v, want one npm pack", calls)
	}
	whl := Source{Registry: "pypi", Package: "langchain-community", Version: "0.4.2", Kind: "wheel"}
	if _, err := f.Fetch(context.Background(), whl); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(calls[1], " "); !strings.Contains(got, "pip download") || !strings.Contains(got, "--no-deps") || !strings.Contains(got, "langchain-community==0.4.2") {
		t.Errorf("pip call = %s", got)
	}
	_, err := f.Fetch(context.Background(), Source{Registry: "pypi", Package: "broken", Version: "1", Kind: "wheel"})
	if err == nil || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), "--source PLATFORM=PATH") {
		t.Errorf("unreachable registry error = %v", err)
	}
	if v, err := f.Latest(context.Background(), src); err != nil || v != "3.0.0" {
		t.Errorf("npm latest = %q %v", v, err)
	}
	if v, err := f.Latest(context.Background(), whl); err != nil || v != "1.2.3" {
		t.Errorf("pip latest = %q %v", v, err)
	}
}

// Shares worked out by hand: n8n has 4 tools, 2 with an endpoint, 3 with a required credential
// (one only optional), 1 broken and 1 needing auth after probing.
func TestComputeStatsByHand(t *testing.T) {
	req := []catalog.Credential{{Name: "k", Required: true}}
	tools := []catalog.Tool{
		{ID: "1", Platform: "n8n", Endpoints: []catalog.Endpoint{{URL: "https://a.test"}}, Auth: req, Probe: &catalog.ProbeResult{Status: catalog.ProbeBroken}},
		{ID: "2", Platform: "n8n", Endpoints: []catalog.Endpoint{{URL: "https://b.test"}}, Auth: req, Probe: &catalog.ProbeResult{Status: catalog.ProbeNeedsAuth}},
		{ID: "3", Platform: "n8n", Auth: req, Probe: &catalog.ProbeResult{Status: catalog.ProbeNoEndpoint}, RuntimeOnly: []string{"description"}},
		{ID: "4", Platform: "n8n", Auth: []catalog.Credential{{Name: "opt"}}, Probe: &catalog.ProbeResult{Status: catalog.ProbeNoEndpoint}},
		{ID: "5", Platform: "crewai"},
	}
	results := []*PlatformResult{{Platform: "n8n", Warnings: []string{"w"}}, {Platform: "crewai"}}
	st := ComputeStats(results, tools)
	n := st[0]
	if n.Tools != 4 || n.WithEndpoint != 0.5 || n.NeedsAuth != 0.75 || n.RuntimeOnly != 1 || !n.Probed ||
		n.Broken != 0.25 || n.LacksAuth != 0.25 || n.BrokenOrNoAuth != 0.5 || n.Warnings != 1 || n.ProbeStatus[catalog.ProbeNoEndpoint] != 2 {
		t.Errorf("n8n stats = %+v", n)
	}
	if c := st[1]; c.Tools != 1 || c.Probed || c.WithEndpoint != 0 {
		t.Errorf("crewai stats = %+v", c)
	}
	var buf bytes.Buffer
	if err := WriteStatsTable(&buf, st); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"50.0%", "75.0%", "25.0%", "broken or lacking auth"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, buf.String())
		}
	}
	// "all" row: 5 tools, 2 with endpoint (40%), 3 needing auth (60%).
	if !strings.Contains(buf.String(), "40.0%") || !strings.Contains(buf.String(), "60.0%") {
		t.Errorf("total row wrong:\n%s", buf.String())
	}
}

// Run over the four testdata trees: writes a catalog readable by catalog.ReadJSONL, with the
// prior set by the lexical fallback, and prints the table and the JSON stats.
func TestRunOnTestdata(t *testing.T) {
	out := filepath.Join(t.TempDir(), "data", "catalog.jsonl")
	statsOut := filepath.Join(t.TempDir(), "stats.json")
	var stdout, stderr bytes.Buffer
	ro := RunOptions{
		Options: Options{Local: map[string][]LocalSource{
			"n8n":        {{Path: "testdata/n8n"}},
			"langchain":  {{Path: "testdata/langchain"}},
			"crewai":     {{Path: "testdata/crewai"}},
			"llamaindex": {{Path: "testdata/llamaindex/llama_index_tools_basea-1.0.0"}, {Path: "testdata/llamaindex/llama_index_tools_extb-2.0.0"}},
		}},
		Out: out, StatsOut: statsOut, Stdout: &stdout, Stderr: &stderr, Provenance: provenance.Record{Rated: provenance.Current()},
	}
	stats, err := Run(context.Background(), ro)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := catalog.ReadJSONL(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 5+7+3+6 {
		t.Errorf("catalog has %d tools, want 21", len(tools))
	}
	for _, tl := range tools {
		if tl.Prior == nil || tl.Prior.ConsistencyMethod != "lexical-cosine" {
			t.Fatalf("%s: prior %+v", tl.ID, tl.Prior)
		}
		w := map[string]float64{"n8n": 0.8, "langchain": 0.9, "crewai": 0.9, "llamaindex": 0.9}[tl.Platform]
		if tl.Prior.SourceWeight != w {
			t.Errorf("%s: source weight %v, want %v", tl.ID, tl.Prior.SourceWeight, w)
		}
		v := 0.5*tl.Prior.Consistency + 0.3*tl.Prior.SourceWeight + 0.2*tl.Prior.Quality
		if math.Abs(v-tl.Prior.Value) > 1e-12 {
			t.Errorf("%s: prior value %v != 0.5c+0.3s+0.2q = %v", tl.ID, tl.Prior.Value, v)
		}
	}
	if !strings.Contains(stderr.String(), "lexical fallback") {
		t.Errorf("stderr does not name the lexical fallback: %s", stderr.String())
	}
	if len(stats) != 4 || stats[0].Platform != "n8n" || stats[0].Tools != 5 || stats[1].Tools != 7 {
		t.Errorf("stats = %+v", stats)
	}
	var fromFile StatsFile
	data, _ := os.ReadFile(statsOut)
	if err := json.Unmarshal(data, &fromFile); err != nil || len(fromFile.Platforms) != 4 || fromFile.Platforms[1].Tools != 7 || fromFile.Run.Rated.GoVersion != runtime.Version() {
		t.Errorf("stats file: %v %s", err, data)
	}
	if !strings.Contains(stdout.String(), "platform") || !strings.Contains(stdout.String(), `"share_with_endpoint"`) {
		t.Errorf("stdout lacks table or JSON:\n%s", stdout.String())
	}
}

func TestParseLocalSource(t *testing.T) {
	dir := t.TempDir()
	repo := filepath.Join(dir, "langchain.git")
	os.Mkdir(repo, 0o755)
	plat, ls, err := ParseLocalSource("langchain=" + repo + "@libs/community/v0.3.23")
	if err != nil || plat != "langchain" || ls.Path != repo || ls.Rev != "libs/community/v0.3.23" {
		t.Errorf("got %s %+v %v", plat, ls, err)
	}
	odd := filepath.Join(dir, "a@b")
	os.Mkdir(odd, 0o755)
	if _, ls, _ := ParseLocalSource("n8n=" + odd); ls.Path != odd || ls.Rev != "" {
		t.Errorf("an existing path holding @ is not a revision: %+v", ls)
	}
	for _, bad := range []string{"nope=/x", "n8n", "=x"} {
		if _, _, err := ParseLocalSource(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// Run with a prober: every connection is dialled to a server on 127.0.0.1, whatever the host
// name, so the catalog's hosts are answered locally and nothing leaves the machine.
// probeFixture is an n8n tree of four nodes (alpha, beta and gamma at their own hosts, delta
// templated) and a transport that dials every host to a server on 127.0.0.1 answering alpha
// 200, beta 401 and the rest 404; hosts counts the requests per host.
func probeFixture(t *testing.T) (dir string, loopback *http.Transport, hosts *sync.Map) {
	t.Helper()
	hosts = &sync.Map{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := hosts.LoadOrStore(r.Host, new(atomic.Int32))
		n.(*atomic.Int32).Add(1)
		switch r.Host {
		case "api.alpha.test":
			w.WriteHeader(200)
		case "api.beta.test":
			w.WriteHeader(401)
		default:
			w.WriteHeader(404)
		}
	}))
	t.Cleanup(srv.Close)
	dir = t.TempDir()
	os.MkdirAll(filepath.Join(dir, "dist/types"), 0o755)
	os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"n8n-nodes-probe","version":"1.0.0"}`), 0o644)
	node := func(name, url string) string {
		return `{"displayName":"` + name + `","name":"` + name + `","group":["input"],"version":1,"description":"Node ` + name +
			`","requestDefaults":{"baseURL":"` + url + `"},"properties":[]}`
	}
	nodes := "[" + node("alpha", "http://api.alpha.test/v1") + "," + node("beta", "http://api.beta.test/v1") + "," +
		node("gamma", "http://api.gamma.test/v1") + "," + node("delta", "https://{tenant}.delta.test") + "]"
	os.WriteFile(filepath.Join(dir, "dist/types/nodes.json"), []byte(nodes), 0o644)
	os.WriteFile(filepath.Join(dir, "dist/types/credentials.json"), []byte("[]"), 0o644)
	loopback = &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, srv.Listener.Addr().String())
	}}
	return dir, loopback, hosts
}

func TestRunWithProbeOnLoopback(t *testing.T) {
	dir, loopback, _ := probeFixture(t)
	clock := &fakeClock{now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	prober := newTestProber(clock)
	prober.Client = &http.Client{Transport: loopback}
	out := filepath.Join(t.TempDir(), "catalog.jsonl")
	var stdout bytes.Buffer
	stats, err := Run(context.Background(), RunOptions{
		Options: Options{Platforms: []string{"n8n"}, Local: map[string][]LocalSource{"n8n": {{Path: dir}}}},
		Out:     out, Prober: prober, Stdout: &stdout,
	})
	if err != nil {
		t.Fatal(err)
	}
	st := stats[0]
	// 4 tools: alpha reachable, beta needs auth, gamma broken (404), delta templated.
	if st.Tools != 4 || !st.Probed || st.Broken != 0.25 || st.LacksAuth != 0.25 || st.BrokenOrNoAuth != 0.5 ||
		st.ProbeStatus[catalog.ProbeReachable] != 1 || st.ProbeStatus[catalog.ProbeTemplated] != 1 {
		t.Errorf("stats = %+v", st)
	}
	tools, err := catalog.ReadJSONL(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		if tl.Probe == nil || !tl.Probe.CheckedAt.Equal(clock.Now()) {
			t.Errorf("%s: probe %+v", tl.ID, tl.Probe)
		}
	}
	if !strings.Contains(stdout.String(), "broken or lacking auth") || !strings.Contains(stdout.String(), `"share_broken_or_lacking_auth": 0.5`) {
		t.Errorf("output:\n%s", stdout.String())
	}
}

// TestProbeResumesFromItsJournal: a run interrupted after probing alpha left its result (and a
// last line torn by the crash) in the journal beside the catalog; the next run takes alpha's
// result from it without a request to alpha's host, probes the rest, and removes the journal
// once the catalog is written. The journal's alpha result (needs_auth) differs from what the
// server would answer (200), so the catalog shows where it came from.
func TestProbeResumesFromItsJournal(t *testing.T) {
	dir, loopback, hosts := probeFixture(t)
	out := filepath.Join(t.TempDir(), "catalog.jsonl")
	journal := ProbeJournalPath(out)
	kept := `{"status":"needs_auth","url":"http://api.alpha.test/v1","http_code":401,"checked_at":"2026-05-01T11:00:00Z"}` + "\n" +
		`{"status":"reach`
	if err := os.WriteFile(journal, []byte(kept), 0o644); err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	prober := newTestProber(clock)
	prober.Client = &http.Client{Transport: loopback}
	var stderr bytes.Buffer
	_, err := Run(context.Background(), RunOptions{
		Options: Options{Platforms: []string{"n8n"}, Local: map[string][]LocalSource{"n8n": {{Path: dir}}}},
		Out:     out, Prober: prober, Stderr: &stderr,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, probed := hosts.Load("api.alpha.test"); probed {
		t.Error("alpha was probed again although the journal held its result")
	}
	if _, probed := hosts.Load("api.beta.test"); !probed {
		t.Error("beta, not in the journal, was not probed")
	}
	tools, err := catalog.ReadJSONL(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		if strings.HasSuffix(tl.ID, "alpha") && (tl.Probe.Status != catalog.ProbeNeedsAuth || tl.Probe.HTTPCode != 401) {
			t.Errorf("alpha: %+v, want the journal's needs_auth", tl.Probe)
		}
	}
	if !strings.Contains(stderr.String(), "resuming, 1 results kept") {
		t.Errorf("stderr does not say it resumed:\n%s", stderr.String())
	}
	if _, err := os.Stat(journal); err == nil {
		t.Error("the journal is left after the catalog was written")
	}
	bad := filepath.Join(t.TempDir(), "j.jsonl")
	os.WriteFile(bad, []byte(`{"status":"reachable","url":"http://a.test"}`+"\n{broken}\n"), 0o644)
	if _, _, err := OpenProbeJournal(bad); err == nil || !strings.Contains(err.Error(), bad+":2:") {
		t.Errorf("a malformed line before the last: error %v, want it to name %s:2", err, bad)
	}
}

// TestFetcherChecksPinnedDigests: sha256("archive") by hand (printf archive | sha256sum); a
// download or a cached file with another digest is refused naming the package, the file and
// both digests, and a refused download is not cached.
func TestFetcherChecksPinnedDigests(t *testing.T) {
	const digest = "0eb3e36bfb24dcd9bb1d1bece1531216b59539a8fde17ee80224af0653c92aa3"
	other := strings.Repeat("0", 64)
	dir := t.TempDir()
	run := func(_ context.Context, wd, _ string, _ ...string) ([]byte, error) {
		return nil, os.WriteFile(filepath.Join(wd, "downloaded-file"), []byte("archive"), 0o644)
	}
	f := &Fetcher{Dir: dir, Run: run}
	src := Source{Registry: "npm", Package: "n8n-nodes-base", Version: "2.41.2", Kind: "npm", Sha256: other}
	_, err := f.Fetch(context.Background(), src)
	if err == nil || !strings.Contains(err.Error(), "n8n-nodes-base 2.41.2") || !strings.Contains(err.Error(), digest) || !strings.Contains(err.Error(), "pinned "+other) {
		t.Fatalf("a download with another digest: error %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, src.CacheName())); err == nil {
		t.Fatal("the refused download was cached")
	}
	src.Sha256 = digest
	p, err := f.Fetch(context.Background(), src)
	if err != nil {
		t.Fatalf("a download with the pinned digest: %v", err)
	}
	os.WriteFile(p, []byte("tampered"), 0o644)
	if _, err := f.Fetch(context.Background(), src); err == nil || !strings.Contains(err.Error(), "cached") || !strings.Contains(err.Error(), p) {
		t.Fatalf("a cached file with another digest: error %v", err)
	}
	if _, err := ParseSources("s.yaml", []byte("platforms:\n  n8n:\n    - {registry: npm, package: x, version: 1.0.0, kind: npm, sha256: ABC}\n")); err == nil || !strings.Contains(err.Error(), "platforms.n8n[0]: sha256") {
		t.Fatalf("a malformed digest: error %v", err)
	}
}

// TestShippedSourcesArePinnedAndReadAlikeBySetup: every shipped source carries its digest, and
// the setup script's sed reading of configs/sources.yaml gives exactly ParseSources' entries
// (the script downloads and checks what the crawl later reads; an entry sed could not match
// would be crawled but never installed).
func TestShippedSourcesArePinnedAndReadAlikeBySetup(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testassets.Root(t), "configs", "sources.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseSources("configs/sources.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, srcs := range cfg.Platforms {
		for _, s := range srcs {
			if s.Sha256 == "" {
				t.Errorf("%s %s has no sha256", s.Package, s.Version)
			}
			want = append(want, strings.Join([]string{s.Registry, s.Package, s.Version, s.Kind, s.Sha256}, "\t"))
		}
	}
	script, err := os.ReadFile(filepath.Join(testassets.Root(t), "scripts", "setup.d", "30-catalog-sources.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`sed -nE '([^']+)' "\$cfg"`).FindSubmatch(script)
	if m == nil {
		t.Fatal("no sed expression reading $cfg in 30-catalog-sources.sh")
	}
	cmd := exec.Command("sed", "-nE", string(m[1]))
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("the setup script reads %d sources, ParseSources %d:\n%v\n%v", len(got), len(want), got, want)
	}
}
