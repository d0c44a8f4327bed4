package crawl

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rated-dev/rated/pkg/catalog"
)

func toolIDs(tools []catalog.Tool) []string {
	var ids []string
	for _, t := range tools {
		ids = append(ids, t.ID)
	}
	return ids
}

func warningsContain(t *testing.T, warnings []string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		found := false
		for _, w := range warnings {
			if strings.Contains(w, p) {
				found = true
			}
		}
		if !found {
			t.Errorf("no warning contains %q in %v", p, warnings)
		}
	}
}

// Expected records worked out by hand from testdata/langchain (see docs/CRAWL.md).
func TestCrawlLangChainTestdata(t *testing.T) {
	res, err := CrawlLangChain([]*Tree{loadTestTree(t, "testdata/langchain")})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"langchain/acme/list_widgets", "langchain/acme/create-widget", "langchain/acme/dynamic_op",
		"langchain/weather/weather_lookup", "langchain/weather/weather_forecast",
		"langchain/weather/dynamicweathertool", "langchain/weather/static_weather",
	}
	if got := toolIDs(res.Tools); !reflect.DeepEqual(got, want) {
		t.Fatalf("ids = %v\nwant %v", got, want)
	}
	if len(res.Warnings) != 1 {
		t.Errorf("warnings = %v, want one for broken.py", res.Warnings)
	}
	warningsContain(t, res.Warnings, "langchain_community/tools/weather/broken.py: line 2: unterminated string literal")
	m := byID(res.Tools)
	cases := []struct {
		id, name, desc string
		runtime        []string
	}{
		{"langchain/acme/list_widgets", "list_widgets", "This tool lists Acme widgets. It takes no input.", nil},
		{"langchain/acme/create-widget", "Create Widget", "This tool creates an Acme widget. Input is the widget name.", nil},
		{"langchain/acme/dynamic_op", "dynamic_op", "", []string{"description"}},
		{"langchain/weather/weather_lookup", "weather_lookup", "Looks up the weather. Input should be a city name.", nil},
		{"langchain/weather/weather_forecast", "weather_forecast", "Weather forecast for the next days.", nil},
		{"langchain/weather/dynamicweathertool", "DynamicWeatherTool", "", []string{"name", "description"}},
		{"langchain/weather/static_weather", "static_weather", "No placeholders {here}", nil},
	}
	for _, c := range cases {
		tl := m[c.id]
		if tl.Name != c.name || tl.Description != c.desc || !reflect.DeepEqual(tl.RuntimeOnly, c.runtime) {
			t.Errorf("%s: name %q desc %q runtime %v; want %q %q %v", c.id, tl.Name, tl.Description, tl.RuntimeOnly, c.name, c.desc, c.runtime)
		}
		if tl.Package != "langchain-community" || tl.Version != "9.9.9" {
			t.Errorf("%s: package %q version %q", c.id, tl.Package, tl.Version)
		}
	}
	lookup := m["langchain/weather/weather_lookup"]
	if !reflect.DeepEqual(lookup.Endpoints, []catalog.Endpoint{{URL: "https://api.weather.test/v1/forecast"}}) {
		t.Errorf("weather endpoints = %+v (the docs URL inside prose must not count)", lookup.Endpoints)
	}
	wantAuth := []catalog.Credential{{Name: "WEATHER_API_KEY", Kind: "env", Required: true}, {Name: "WEATHER_REGION", Kind: "env"}}
	if !reflect.DeepEqual(lookup.Auth, wantAuth) {
		t.Errorf("weather auth = %+v", lookup.Auth)
	}
	if lookup.Function != "langchain_community.tools.weather.tool.WeatherTool" || lookup.SourceFile != "langchain_community/tools/weather/tool.py:9" {
		t.Errorf("function %q source %q", lookup.Function, lookup.SourceFile)
	}
	op := m["langchain/acme/create-widget"]
	if op.Function != "create" || !reflect.DeepEqual(op.Endpoints, []catalog.Endpoint{{URL: "https://{tenant}.acme.test/api", Templated: true}}) ||
		!reflect.DeepEqual(op.Auth, []catalog.Credential{{Name: "ACME_TOKEN", Kind: "env", Required: true}}) {
		t.Errorf("toolkit op = %+v", op)
	}
}

// Expected records worked out by hand from testdata/crewai.
func TestCrawlCrewAITestdata(t *testing.T) {
	res, err := CrawlCrewAI([]*Tree{loadTestTree(t, "testdata/crewai")})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"crewai/acme_search_tool/acme-search", "crewai/acme_search_tool/acme-image-search", "crewai/dynamic_tool/dynamic-tool"}
	if got := toolIDs(res.Tools); !reflect.DeepEqual(got, want) {
		t.Fatalf("ids = %v\nwant %v", got, want)
	}
	if len(res.Warnings) != 3 {
		t.Errorf("warnings = %v, want 3", res.Warnings)
	}
	warningsContain(t, res.Warnings, "AcmeImageSearchTool: description differs", "env var DYN_TOKEN", "lists GhostTool")
	m := byID(res.Tools)
	s := m["crewai/acme_search_tool/acme-search"]
	if s.Name != "Acme Search" || s.Description != "A tool that searches Acme. Returns the top results." || s.Version != "0.5.0" {
		t.Errorf("search = %+v", s)
	}
	if !reflect.DeepEqual(s.Endpoints, []catalog.Endpoint{{URL: "https://api.acme.test/v2/search"}}) {
		t.Errorf("search endpoints = %+v", s.Endpoints)
	}
	wantAuth := []catalog.Credential{{Name: "ACME_API_KEY", Kind: "env", Required: true}, {Name: "ACME_REGION", Kind: "env"}}
	if !reflect.DeepEqual(s.Auth, wantAuth) {
		t.Errorf("search auth = %+v", s.Auth)
	}
	img := m["crewai/acme_search_tool/acme-image-search"]
	if !reflect.DeepEqual(img.Endpoints, []catalog.Endpoint{{URL: "https://api.acme.test/v2/images"}}) || !reflect.DeepEqual(img.Auth, wantAuth) {
		t.Errorf("image search: subclass URL must override, env vars inherit: %+v %+v", img.Endpoints, img.Auth)
	}
	dyn := m["crewai/dynamic_tool/dynamic-tool"]
	if dyn.Name != "Dynamic Tool" || dyn.Description != "" || !reflect.DeepEqual(dyn.RuntimeOnly, []string{"name", "description"}) {
		t.Errorf("dynamic = %+v", dyn)
	}
}

// Expected records worked out by hand from testdata/llamaindex: two packages, ExtBSpec and
// ExtCSpec inherit from BaseASpec across packages through a package re-export.
func TestCrawlLlamaIndexTestdata(t *testing.T) {
	var trees []*Tree
	for _, d := range []string{"llama_index_tools_basea-1.0.0", "llama_index_tools_extb-2.0.0"} {
		trees = append(trees, loadTestTree(t, filepath.Join("testdata/llamaindex", d)))
	}
	res, err := CrawlLlamaIndex(trees)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"llamaindex/basea:baseaspec/search", "llamaindex/basea:baseaspec/fetch",
		"llamaindex/extb:extbspec/search", "llamaindex/extb:extbspec/extra",
		"llamaindex/extb:extcspec/search", "llamaindex/extb:extcspec/fetch",
	}
	if got := toolIDs(res.Tools); !reflect.DeepEqual(got, want) {
		t.Fatalf("ids = %v\nwant %v", got, want)
	}
	if len(res.Warnings) != 1 {
		t.Errorf("warnings = %v", res.Warnings)
	}
	warningsContain(t, res.Warnings, "ExtBSpec lists missing in spec_functions but defines no such method")
	m := byID(res.Tools)
	cases := []struct{ id, desc, source string }{
		{"llamaindex/basea:baseaspec/search", "Search Base A for documents.", "llama_index/tools/basea/base.py:17"},
		{"llamaindex/basea:baseaspec/fetch", "Fetch one document from Base A.", "llama_index/tools/basea/base.py:27"},
		{"llamaindex/extb:extbspec/search", "Search Base A for documents.", "llama_index/tools/basea/base.py:17"},
		{"llamaindex/extb:extcspec/fetch", "Fetch from C instead.", "llama_index/tools/extb/base.py:19"},
	}
	for _, c := range cases {
		if tl := m[c.id]; tl.Description != c.desc || tl.SourceFile != c.source {
			t.Errorf("%s: desc %q source %q; want %q %q", c.id, tl.Description, tl.SourceFile, c.desc, c.source)
		}
	}
	search := m["llamaindex/basea:baseaspec/search"]
	if !reflect.DeepEqual(search.Parameters, []catalog.Parameter{{Name: "query", Required: true}, {Name: "limit"}}) {
		t.Errorf("params = %+v", search.Parameters)
	}
	if !reflect.DeepEqual(search.Endpoints, []catalog.Endpoint{{URL: "https://api.basea.test/v1"}}) ||
		!reflect.DeepEqual(search.Auth, []catalog.Credential{{Name: "api_key", Kind: "api_key", Required: true}}) {
		t.Errorf("search endpoints %+v auth %+v", search.Endpoints, search.Auth)
	}
	extB := m["llamaindex/extb:extbspec/search"]
	if extB.Package != "llama-index-tools-extb" || extB.Version != "2.0.0" ||
		!reflect.DeepEqual(extB.Auth, []catalog.Credential{{Name: "token", Kind: "api_key", Required: true}}) ||
		!reflect.DeepEqual(extB.Endpoints, search.Endpoints) {
		t.Errorf("extb search = %+v", extB)
	}
	if extra := m["llamaindex/extb:extbspec/extra"]; extra.Description != "" || !reflect.DeepEqual(extra.RuntimeOnly, []string{"description"}) {
		t.Errorf("extra = %+v", extra)
	}
}

func TestPythonPlatformsRejectTreesWithoutPackage(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "setup.py"), []byte("x = 1\n"), 0o644)
	tr := loadTestTree(t, dir)
	if _, err := CrawlLangChain([]*Tree{tr}); err == nil || !strings.Contains(err.Error(), "no langchain_community/") {
		t.Errorf("langchain: %v", err)
	}
	if _, err := CrawlCrewAI([]*Tree{tr}); err == nil || !strings.Contains(err.Error(), "no crewai_tools/") {
		t.Errorf("crewai: %v", err)
	}
}

// In a checkout of the LlamaIndex monorepo the package of a module is its
// llama-index-tools-<name>/ directory, so ids match those of the published wheels.
func TestCrawlLlamaIndexMonorepoLayout(t *testing.T) {
	dir := t.TempDir()
	for _, pkg := range []string{"basea", "extb"} {
		src := filepath.Join("testdata/llamaindex", map[string]string{"basea": "llama_index_tools_basea-1.0.0", "extb": "llama_index_tools_extb-2.0.0"}[pkg], "llama_index")
		dst := filepath.Join(dir, "llama-index-integrations/tools/llama-index-tools-"+pkg, "llama_index")
		if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
	}
	res, err := CrawlLlamaIndex([]*Tree{loadTestTree(t, dir)})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"llamaindex/basea:baseaspec/search", "llamaindex/basea:baseaspec/fetch",
		"llamaindex/extb:extbspec/search", "llamaindex/extb:extbspec/extra",
		"llamaindex/extb:extcspec/search", "llamaindex/extb:extcspec/fetch",
	}
	if got := toolIDs(res.Tools); !reflect.DeepEqual(got, want) {
		t.Fatalf("ids = %v\nwant %v", got, want)
	}
	if p := res.Tools[2].Package; p != "llama-index-tools-extb" {
		t.Errorf("package = %q", p)
	}
}
