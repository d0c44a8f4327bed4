// Package gen turns the hand-authored source of the embedded default benchmark
// (pkg/defaultbench/source/*.yaml) into the files that pkg/defaultbench embeds: the BEIR layout
// (corpus.jsonl, queries.jsonl, qrels/dev.tsv, qrels/test.tsv) and catalog.jsonl. It validates
// the source first, so a mistake in the data is reported with its file and function rather than
// showing up later as a skewed metric.
//
// Source format (one YAML file per domain, files read in name order):
//
//	functions:
//	- id: slack.send_message            # functional group id, unique
//	  summary: Post a message to a Slack channel or user
//	  tools:
//	  - platform: langchain             # langchain | crewai | llamaindex | n8n
//	    package: langchain-community    # default per platform, see DefaultPackage
//	    name: send_message
//	    description: Sends a message ...
//	    endpoints: [https://slack.com/api/chat.postMessage]   # "{" in the URL marks it templated
//	    auth: ["env:SLACK_USER_TOKEN!"]                      # kind:name, "!" = required
//	    params: ["channel:string! Channel name or id"]       # name:type, "!" = required, then text
//	    tags: [slack, chat]
//	    official: false
//	  queries: |                         # one query per line, blank lines ignored
//	    let the #releases channel know the deploy is done
package gen

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"io/fs"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/catalog"
)

// Limits checked by Validate.
const (
	MinToolsPerFunction     = 3
	MinPlatformsPerFunction = 2
	MinQueriesPerFunction   = 5
	MinQueryWords           = 5
	MaxQueryWords           = 120
	// DevShare is the share of each function's queries that goes to the dev split.
	DevShare = 0.3
	// devShareTenths is DevShare in tenths, for integer rounding.
	devShareTenths = 3
)

// SourceFile is one YAML file of the source.
type SourceFile struct {
	Functions []SourceFunction `yaml:"functions"`
}

// SourceFunction is a functional group: the tools that can serve it and the queries that ask for it.
type SourceFunction struct {
	ID      string       `yaml:"id"`
	Summary string       `yaml:"summary"`
	Tools   []SourceTool `yaml:"tools"`
	Queries string       `yaml:"queries"`
	// File is the source file the function came from (set by ReadSource, for messages).
	File string `yaml:"-"`
}

// SourceTool is one tool in the compact source notation.
type SourceTool struct {
	Platform    string   `yaml:"platform"`
	Package     string   `yaml:"package"`
	Name        string   `yaml:"name"`
	Description string   `yaml:"description"`
	Endpoints   []string `yaml:"endpoints"`
	Auth        []string `yaml:"auth"`
	Params      []string `yaml:"params"`
	Tags        []string `yaml:"tags"`
	Official    bool     `yaml:"official"`
}

// DefaultPackage is the package assumed when a source tool names none.
var defaultPackage = map[string]string{
	catalog.PlatformLangChain: "langchain-community",
	catalog.PlatformCrewAI:    "crewai-tools",
	catalog.PlatformN8n:       "n8n-nodes-base",
}

// DefaultPackage returns the package a tool of platform gets when the source names none ("" when
// the platform has no default, as for LlamaIndex whose tools live in many packages).
func DefaultPackage(platform string) string { return defaultPackage[platform] }

var platforms = map[string]bool{
	catalog.PlatformLangChain: true, catalog.PlatformCrewAI: true,
	catalog.PlatformLlamaIndex: true, catalog.PlatformN8n: true,
}

var placeholder = regexp.MustCompile(`\{[A-Za-z_][A-Za-z0-9_]*\}`)

var authKinds = map[string]bool{"env": true, "credential": true, "api_key": true, "oauth2": true}

// ReadSource reads every *.yaml file of dir in name order.
func ReadSource(dir fs.FS) ([]SourceFunction, error) {
	names, err := fs.Glob(dir, "*.yaml")
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no *.yaml source files")
	}
	sort.Strings(names)
	var out []SourceFunction
	for _, name := range names {
		raw, err := fs.ReadFile(dir, name)
		if err != nil {
			return nil, err
		}
		var sf SourceFile
		dec := yaml.NewDecoder(bytes.NewReader(raw))
		dec.KnownFields(true)
		if err := dec.Decode(&sf); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		for _, f := range sf.Functions {
			f.File = name
			out = append(out, f)
		}
	}
	return out, nil
}

// QueryLines splits a function's query block into queries, one per non-blank line, with inner
// white space collapsed.
func QueryLines(block string) []string {
	var out []string
	for _, line := range strings.Split(block, "\n") {
		if q := strings.Join(strings.Fields(line), " "); q != "" {
			out = append(out, q)
		}
	}
	return out
}

// NormalizeQuery is the form in which two queries count as the same text: lower case, letters and
// digits only, single spaces.
func NormalizeQuery(q string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(q) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		} else {
			space = true
		}
	}
	return b.String()
}

// Build validates the source and turns it into the benchmark: the catalog sorted by id, the
// corpus built from it, queries in source order with ids q0001…, and the dev/test splits.
func Build(funcs []SourceFunction) (*bench.Bench, error) {
	var errs []string
	fail := func(f SourceFunction, format string, args ...any) {
		errs = append(errs, fmt.Sprintf("%s: function %q: %s", f.File, f.ID, fmt.Sprintf(format, args...)))
	}
	funcSeen := map[string]string{}
	toolSeen := map[string]string{}
	querySeen := map[string]string{}
	var tools []catalog.Tool
	b := &bench.Bench{Splits: map[string]bench.Qrels{"dev": {}, "test": {}}}
	for _, f := range funcs {
		if strings.TrimSpace(f.ID) == "" || strings.ContainsAny(f.ID, " \t/") {
			fail(f, "function id must be non-empty without spaces or '/'")
		}
		if prev, dup := funcSeen[f.ID]; dup {
			fail(f, "duplicate function id (first in %s)", prev)
		}
		funcSeen[f.ID] = f.File
		if strings.TrimSpace(f.Summary) == "" {
			fail(f, "no summary")
		}
		var ids []string
		plats := map[string]bool{}
		for i, st := range f.Tools {
			t, err := st.toTool(f.ID)
			if err != nil {
				fail(f, "tool %d (%s): %v", i+1, st.Name, err)
				continue
			}
			if prev, dup := toolSeen[t.ID]; dup {
				fail(f, "duplicate tool id %q (first in function %s)", t.ID, prev)
				continue
			}
			toolSeen[t.ID] = f.ID
			plats[t.Platform] = true
			ids = append(ids, t.ID)
			tools = append(tools, t)
		}
		if len(f.Tools) < MinToolsPerFunction {
			fail(f, "%d tools, want at least %d", len(f.Tools), MinToolsPerFunction)
		}
		if len(plats) < MinPlatformsPerFunction {
			fail(f, "tools on %d platform(s), want at least %d", len(plats), MinPlatformsPerFunction)
		}
		queries := QueryLines(f.Queries)
		if len(queries) < MinQueriesPerFunction {
			fail(f, "%d queries, want at least %d", len(queries), MinQueriesPerFunction)
		}
		for _, q := range queries {
			if n := len(strings.Fields(q)); n < MinQueryWords || n > MaxQueryWords {
				fail(f, "query %q has %d words, want %d-%d", q, n, MinQueryWords, MaxQueryWords)
			}
			norm := NormalizeQuery(q)
			if prev, dup := querySeen[norm]; dup {
				fail(f, "query %q duplicates one of function %s", q, prev)
			}
			querySeen[norm] = f.ID
		}
		dev := devQueries(queries)
		for _, q := range queries {
			id := fmt.Sprintf("q%04d", len(b.Queries)+1)
			b.Queries = append(b.Queries, bench.Query{ID: id, Text: q, Metadata: map[string]any{"function": f.ID}})
			split := "test"
			if dev[q] {
				split = "dev"
			}
			rel := map[string]int{}
			for _, tid := range ids {
				rel[tid] = 1
			}
			b.Splits[split][id] = rel
		}
	}
	if len(errs) > 0 {
		if len(errs) > 30 {
			errs = append(errs[:30], fmt.Sprintf("... and %d more", len(errs)-30))
		}
		return nil, fmt.Errorf("invalid default benchmark source:\n  %s", strings.Join(errs, "\n  "))
	}
	sort.Slice(tools, func(i, j int) bool { return tools[i].ID < tools[j].ID })
	b.Tools = tools
	b.Corpus = bench.DocsFromTools(tools)
	return b, nil
}

// devQueries picks round(DevShare·n) of a function's queries (at least one) for the dev split:
// those with the smallest FNV-1a hash of their normalized text, so the choice depends on the text
// alone, not on the order or on the other queries of the catalog.
func devQueries(queries []string) map[string]bool {
	type hq struct {
		h uint64
		q string
	}
	hs := make([]hq, len(queries))
	for i, q := range queries {
		h := fnv.New64a()
		h.Write([]byte(NormalizeQuery(q)))
		hs[i] = hq{h.Sum64(), q}
	}
	sort.Slice(hs, func(i, j int) bool {
		if hs[i].h != hs[j].h {
			return hs[i].h < hs[j].h
		}
		return hs[i].q < hs[j].q
	})
	// round(DevShare·n) half up, in integers so no float error moves a boundary case.
	n := (devShareTenths*len(queries) + 5) / 10
	if n < 1 && len(queries) > 1 {
		n = 1
	}
	out := map[string]bool{}
	for _, x := range hs[:n] {
		out[x.q] = true
	}
	return out
}

func (st SourceTool) toTool(function string) (catalog.Tool, error) {
	t := catalog.Tool{
		Name:        strings.TrimSpace(st.Name),
		Description: strings.Join(strings.Fields(st.Description), " "),
		Platform:    st.Platform,
		Package:     st.Package,
		Official:    st.Official,
		Function:    function,
		Tags:        st.Tags,
	}
	if !platforms[t.Platform] {
		return t, fmt.Errorf("unknown platform %q", t.Platform)
	}
	if t.Package == "" {
		t.Package = defaultPackage[t.Platform]
		if t.Package == "" {
			return t, fmt.Errorf("platform %s has no default package; name one", t.Platform)
		}
	}
	if t.Name == "" {
		return t, fmt.Errorf("no name")
	}
	t.ID = catalog.MakeID(t.Platform, t.Package, t.Name)
	for _, raw := range st.Endpoints {
		// A templated URL is checked with its placeholders filled in.
		u, err := url.Parse(placeholder.ReplaceAllString(raw, "x"))
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return t, fmt.Errorf("endpoint %q is not an http(s) URL", raw)
		}
		t.Endpoints = append(t.Endpoints, catalog.Endpoint{URL: raw, Templated: strings.Contains(raw, "{")})
	}
	for _, raw := range st.Auth {
		kind, name, ok := strings.Cut(raw, ":")
		req := strings.HasSuffix(name, "!")
		name = strings.TrimSuffix(name, "!")
		if !ok || !authKinds[kind] || name == "" {
			return t, fmt.Errorf("auth %q: want kind:NAME[!] with kind env, credential, api_key or oauth2", raw)
		}
		t.Auth = append(t.Auth, catalog.Credential{Name: name, Kind: kind, Required: req})
	}
	for _, raw := range st.Params {
		head, text, _ := strings.Cut(strings.TrimSpace(raw), " ")
		name, typ, ok := strings.Cut(head, ":")
		req := strings.HasSuffix(typ, "!")
		typ = strings.TrimSuffix(typ, "!")
		if !ok || name == "" || typ == "" {
			return t, fmt.Errorf("param %q: want name:type[!] [description]", raw)
		}
		t.Parameters = append(t.Parameters, catalog.Parameter{Name: name, Type: typ, Required: req, Description: strings.TrimSpace(text)})
	}
	if err := t.Validate(); err != nil {
		return t, err
	}
	return t, nil
}

// Datasheet markers: UpdateReadme replaces the text between them with StatsMarkdown.
const (
	StatsBegin = "<!-- stats:begin (written by go generate; do not edit) -->"
	StatsEnd   = "<!-- stats:end -->"
)

// StatsMarkdown summarizes a built benchmark for the datasheet: tools per platform, queries per
// split, the distribution of queries per function, and one row per function.
func StatsMarkdown(funcs []SourceFunction, b *bench.Bench) string {
	var sb strings.Builder
	perPlatform := map[string]int{}
	toolsOf := map[string][]catalog.Tool{}
	for _, t := range b.Tools {
		perPlatform[t.Platform]++
		toolsOf[t.Function] = append(toolsOf[t.Function], t)
	}
	fmt.Fprintf(&sb, "| | count |\n|---|---:|\n")
	fmt.Fprintf(&sb, "| tools | %d |\n", len(b.Tools))
	for _, p := range []string{catalog.PlatformLangChain, catalog.PlatformCrewAI, catalog.PlatformLlamaIndex, catalog.PlatformN8n} {
		fmt.Fprintf(&sb, "| tools on %s | %d |\n", p, perPlatform[p])
	}
	fmt.Fprintf(&sb, "| functions | %d |\n", len(funcs))
	fmt.Fprintf(&sb, "| queries | %d |\n", len(b.Queries))
	fmt.Fprintf(&sb, "| queries in dev | %d |\n", len(b.Splits["dev"]))
	fmt.Fprintf(&sb, "| queries in test | %d |\n", len(b.Splits["test"]))

	fmt.Fprintf(&sb, "\n| platform | tools | with tags | without description | description words (median) | with endpoint | templated endpoint |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, p := range []string{catalog.PlatformLangChain, catalog.PlatformCrewAI, catalog.PlatformLlamaIndex, catalog.PlatformN8n} {
		var lens []int
		tagged, empty, withEndpoint, templated := 0, 0, 0, 0
		for _, t := range b.Tools {
			if t.Platform != p {
				continue
			}
			lens = append(lens, len(strings.Fields(t.Description)))
			if len(t.Tags) > 0 {
				tagged++
			}
			if t.Description == "" {
				empty++
			}
			if len(t.Endpoints) > 0 {
				withEndpoint++
			}
			for _, e := range t.Endpoints {
				if e.Templated {
					templated++
					break
				}
			}
		}
		sort.Ints(lens)
		median := 0
		if len(lens) > 0 {
			median = lens[len(lens)/2]
		}
		fmt.Fprintf(&sb, "| %s | %d | %d | %d | %d | %d | %d |\n", p, len(lens), tagged, empty, median, withEndpoint, templated)
	}

	counts := make([]int, len(funcs))
	words := 0
	minW, maxW := 1<<30, 0
	for _, q := range b.Queries {
		n := len(strings.Fields(q.Text))
		words += n
		minW, maxW = min(minW, n), max(maxW, n)
	}
	for i, f := range funcs {
		counts[i] = len(QueryLines(f.Queries))
	}
	sorted := append([]int(nil), counts...)
	sort.Ints(sorted)
	if len(sorted) > 0 && len(b.Queries) > 0 {
		fmt.Fprintf(&sb, "\nQueries per function: min %d, median %d, max %d. Query length: %d–%d words, mean %.1f.\n",
			sorted[0], sorted[len(sorted)/2], sorted[len(sorted)-1], minW, maxW, float64(words)/float64(len(b.Queries)))
	}
	buckets := []struct {
		lo, hi int
	}{{5, 9}, {10, 19}, {20, 29}, {30, 39}, {40, 1 << 30}}
	fmt.Fprintf(&sb, "\n| queries per function | functions |\n|---|---:|\n")
	for _, bk := range buckets {
		n := 0
		for _, c := range counts {
			if c >= bk.lo && c <= bk.hi {
				n++
			}
		}
		label := fmt.Sprintf("%d–%d", bk.lo, bk.hi)
		if bk.hi == 1<<30 {
			label = fmt.Sprintf("%d or more", bk.lo)
		}
		fmt.Fprintf(&sb, "| %s | %d |\n", label, n)
	}
	dev := b.Splits["dev"]
	devOf := map[string]int{}
	for _, q := range b.Queries {
		if dev[q.ID] != nil {
			devOf[q.Metadata["function"].(string)]++
		}
	}
	fmt.Fprintf(&sb, "\n| function | summary | tools (platforms) | queries dev/test |\n|---|---|---|---:|\n")
	for i, f := range funcs {
		plats := map[string]int{}
		for _, t := range toolsOf[f.ID] {
			plats[t.Platform]++
		}
		var ps []string
		for _, p := range []string{catalog.PlatformLangChain, catalog.PlatformCrewAI, catalog.PlatformLlamaIndex, catalog.PlatformN8n} {
			if plats[p] > 0 {
				ps = append(ps, fmt.Sprintf("%s %d", p, plats[p]))
			}
		}
		fmt.Fprintf(&sb, "| `%s` | %s | %d (%s) | %d/%d |\n", f.ID, f.Summary, len(toolsOf[f.ID]), strings.Join(ps, ", "), devOf[f.ID], counts[i]-devOf[f.ID])
	}
	return sb.String()
}

// ReplaceStats returns readme with the text between StatsBegin and StatsEnd replaced by stats.
func ReplaceStats(readme, stats string) (string, error) {
	i := strings.Index(readme, StatsBegin)
	j := strings.Index(readme, StatsEnd)
	if i < 0 || j < i {
		return "", fmt.Errorf("README has no %q ... %q block", StatsBegin, StatsEnd)
	}
	return readme[:i+len(StatsBegin)] + "\n" + stats + readme[j:], nil
}
