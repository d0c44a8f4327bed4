package crawl

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/rated-dev/rated/internal/testassets"
	"github.com/rated-dev/rated/pkg/catalog"
)

// pinnedOptions returns crawl options over the pinned archives installed by
// scripts/setup.d/30-catalog-sources.sh; the fetcher fails instead of downloading.
func pinnedOptions(tb testing.TB) Options {
	tb.Helper()
	root := testassets.Root(tb)
	cfg, err := LoadSources(filepath.Join(root, "configs", "sources.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	dir := filepath.Join(testassets.Dir(tb), "sources")
	for _, p := range Platforms {
		for _, s := range cfg.Platforms[p] {
			testassets.Need(tb, "pinned catalog source "+s.Package, filepath.Join(dir, s.CacheName()))
		}
	}
	noDownload := func(_ context.Context, _, name string, args ...string) ([]byte, error) {
		tb.Fatalf("the crawl of cached sources tried to run %s %v", name, args)
		return nil, nil
	}
	return Options{Config: cfg, Fetcher: &Fetcher{Dir: dir, Run: noDownload}}
}

// The pinned real packages: every tool id found by the Go crawler must equal the set found by
// the independent Python reference (testdata/reference_counts.py: json, tarfile, ast), and
// samples checked by hand against the archives (docs/CRAWL.md) must hold.
func TestCrawlPinnedPackages(t *testing.T) {
	opts := pinnedOptions(t)
	py := testassets.Python(t)
	results, err := Crawl(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, "testdata/reference_counts.py", opts.Fetcher.Dir).Output()
	if err != nil {
		t.Fatalf("reference: %v", err)
	}
	var ref map[string][]string
	if err := json.Unmarshal(out, &ref); err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		var got []string
		for _, tl := range r.Tools {
			got = append(got, tl.ID)
		}
		sort.Strings(got)
		want := ref[r.Platform]
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: %d tools, reference %d; first differences: %v", r.Platform, len(got), len(want), diffSample(got, want))
		}
		t.Logf("%s: %d tools (reference %d), %d warnings", r.Platform, len(r.Tools), len(want), len(r.Warnings))
	}
	tools := byID(AllTools(results))
	// Hand-checked samples.
	slack := 0
	for id := range tools {
		if strings.HasPrefix(id, "n8n/slack/") {
			slack++
		}
	}
	if slack != 48 { // Slack v2.7: channel 17 + message 9 + star 3 + file 3 + reaction 3 + user 6 + userGroup 7
		t.Errorf("n8n slack tools = %d, want 48", slack)
	}
	an := tools["n8n/actionnetwork/attendance.create"]
	// Endpoints: the credential's test request base URL, and the two template literals of
	// dist/nodes/ActionNetwork/GenericFunctions.js.
	wantAN := []catalog.Endpoint{{URL: "https://actionnetwork.org/api/v2"}, {URL: "https://actionnetwork.org/api/v2/people/{personId}"},
		{URL: "https://actionnetwork.org/api/v2{endpoint}"}}
	if an.Description != "Create an attendance. Consume the Action Network API" || !reflect.DeepEqual(an.Endpoints, wantAN) ||
		len(an.Auth) != 1 || an.Auth[0] != (catalog.Credential{Name: "actionNetworkApi", Kind: "credential", Required: true}) {
		t.Errorf("n8n action network attendance.create = %+v", an)
	}
	github := 0
	for id := range tools {
		if strings.HasPrefix(id, "langchain/github/") {
			github++
		}
	}
	if github != 24 { // the operations list of GitHubToolkit.from_github_api_wrapper
		t.Errorf("langchain github toolkit operations = %d, want 24", github)
	}
	brave := tools["crewai/brave_search_tool/brave-search"]
	if brave.Name != "Brave Search" || len(brave.Endpoints) != 1 || brave.Endpoints[0].URL != "https://api.search.brave.com/res/v1/web/search" ||
		len(brave.Auth) != 1 || brave.Auth[0] != (catalog.Credential{Name: "BRAVE_API_KEY", Kind: "env", Required: true}) {
		t.Errorf("crewai brave search = %+v", brave)
	}
	wiki := tools["llamaindex/wikipedia:wikipediatoolspec/load_data"]
	if !strings.HasPrefix(wiki.Description, "Retrieve a Wikipedia page.") || len(wiki.Parameters) != 2 ||
		wiki.Parameters[0] != (catalog.Parameter{Name: "page", Required: true}) {
		t.Errorf("llamaindex wikipedia load_data = %+v", wiki)
	}
	if _, ok := tools["llamaindex/wikipedia:wikipediatoolspec/search_data"]; !ok {
		t.Error("llamaindex wikipedia search_data missing")
	}
}

func diffSample(got, want []string) []string {
	g, w := map[string]bool{}, map[string]bool{}
	for _, x := range got {
		g[x] = true
	}
	for _, x := range want {
		w[x] = true
	}
	var out []string
	for _, x := range got {
		if !w[x] && len(out) < 5 {
			out = append(out, "+"+x)
		}
	}
	for _, x := range want {
		if !g[x] && len(out) < 10 {
			out = append(out, "-"+x)
		}
	}
	return out
}

// BenchmarkCrawlPinned measures the whole four-platform crawl from the cached archives (no
// probing, no prior): reading the archives and parsing every platform.
func BenchmarkCrawlPinned(b *testing.B) {
	opts := pinnedOptions(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		results, err := Crawl(context.Background(), opts)
		if err != nil {
			b.Fatal(err)
		}
		n := len(AllTools(results))
		b.ReportMetric(float64(n), "tools")
	}
}

// BenchmarkPriorPinned measures the metadata prior (lexical fallback) over the crawled catalog.
func BenchmarkPriorPinned(b *testing.B) {
	results, err := Crawl(context.Background(), pinnedOptions(b))
	if err != nil {
		b.Fatal(err)
	}
	tools := AllTools(results)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := catalog.ComputePriors(tools, catalog.PaperPriorConfig(), nil); err != nil {
			b.Fatal(err)
		}
	}
}
