package defaultbench

import (
	"bytes"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/defaultbench/internal/gen"
)

func load(t *testing.T) *bench.Bench {
	t.Helper()
	b, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestLoad(t *testing.T) {
	b := load(t)
	if len(b.Warnings) != 0 {
		t.Errorf("warnings: %v", b.Warnings)
	}
	if len(b.Tools) == 0 || len(b.Corpus) == 0 || len(b.Queries) == 0 {
		t.Fatalf("empty benchmark: %d tools, %d docs, %d queries", len(b.Tools), len(b.Corpus), len(b.Queries))
	}
	var splits []string
	for s := range b.Splits {
		splits = append(splits, s)
	}
	sort.Strings(splits)
	if strings.Join(splits, ",") != "dev,test" {
		t.Errorf("splits = %v, want dev,test", splits)
	}
}

func TestCorpusMatchesCatalog(t *testing.T) {
	b := load(t)
	if len(b.Corpus) != len(b.Tools) {
		t.Fatalf("%d corpus docs, %d catalog tools", len(b.Corpus), len(b.Tools))
	}
	docs := map[string]bench.Doc{}
	for _, d := range b.Corpus {
		docs[d.ID] = d
	}
	platforms := map[string]bool{catalog.PlatformLangChain: true, catalog.PlatformCrewAI: true,
		catalog.PlatformLlamaIndex: true, catalog.PlatformN8n: true}
	for _, tool := range b.Tools {
		d, ok := docs[tool.ID]
		if !ok {
			t.Errorf("tool %s has no corpus document", tool.ID)
			continue
		}
		if d.Title != tool.Name || d.Text != tool.Description {
			t.Errorf("tool %s: corpus (%q, %q) differs from catalog (%q, %q)", tool.ID, d.Title, d.Text, tool.Name, tool.Description)
		}
		if want := catalog.MakeID(tool.Platform, tool.Package, tool.Name); tool.ID != want {
			t.Errorf("tool id %q, want MakeID = %q", tool.ID, want)
		}
		if !platforms[tool.Platform] || tool.Package == "" || tool.Function == "" {
			t.Errorf("tool %s: platform %q, package %q, function %q", tool.ID, tool.Platform, tool.Package, tool.Function)
		}
		for _, e := range tool.Endpoints {
			if e.Templated != strings.Contains(e.URL, "{") {
				t.Errorf("tool %s: endpoint %s templated=%v", tool.ID, e.URL, e.Templated)
			}
		}
	}
}

// TestQrels checks every qrels row against the catalog: known ids, score 1, each query in exactly
// one split, and its relevant set equal to all tools of the query's function.
func TestQrels(t *testing.T) {
	b := load(t)
	docIDs := map[string]bool{}
	for _, d := range b.Corpus {
		docIDs[d.ID] = true
	}
	toolsOf := map[string][]string{}
	for _, tool := range b.Tools {
		toolsOf[tool.Function] = append(toolsOf[tool.Function], tool.ID)
	}
	queries := map[string]bench.Query{}
	for _, q := range b.Queries {
		queries[q.ID] = q
	}
	inSplits := map[string]int{}
	for split, qrels := range b.Splits {
		for qid, rel := range qrels {
			inSplits[qid]++
			q, ok := queries[qid]
			if !ok {
				t.Errorf("%s: unknown query %s", split, qid)
				continue
			}
			var got []string
			for did, score := range rel {
				if !docIDs[did] {
					t.Errorf("%s: query %s names unknown document %s", split, qid, did)
				}
				if score != 1 {
					t.Errorf("%s: %s/%s score %d, want 1", split, qid, did, score)
				}
				got = append(got, did)
			}
			fn, _ := q.Metadata["function"].(string)
			want := append([]string(nil), toolsOf[fn]...)
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("%s: query %s (function %q) relevant %v, want %v", split, qid, fn, got, want)
			}
		}
	}
	for _, q := range b.Queries {
		if inSplits[q.ID] != 1 {
			t.Errorf("query %s is in %d splits, want 1", q.ID, inSplits[q.ID])
		}
	}
}

func TestFunctionsHaveAlternatives(t *testing.T) {
	b := load(t)
	tools := map[string]int{}
	platforms := map[string]map[string]bool{}
	for _, tool := range b.Tools {
		tools[tool.Function]++
		if platforms[tool.Function] == nil {
			platforms[tool.Function] = map[string]bool{}
		}
		platforms[tool.Function][tool.Platform] = true
	}
	queries := map[string]int{}
	for _, q := range b.Queries {
		queries[q.Metadata["function"].(string)]++
	}
	for fn, n := range tools {
		if n < 3 || len(platforms[fn]) < 2 {
			t.Errorf("function %s: %d tools on %d platforms, want >= 3 on >= 2", fn, n, len(platforms[fn]))
		}
		if queries[fn] < 5 {
			t.Errorf("function %s: %d queries, want >= 5", fn, queries[fn])
		}
	}
	for fn := range queries {
		if tools[fn] == 0 {
			t.Errorf("queries of function %s have no tools", fn)
		}
	}
}

// TestSplitsShareNoText checks that no query text (compared case- and punctuation-insensitively)
// is in both dev and test, and that each function sends about 30% of its queries to dev.
func TestSplitsShareNoText(t *testing.T) {
	b := load(t)
	norm := func(s string) string {
		return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127)
		}), " ")
	}
	text := map[string]string{}
	for _, q := range b.Queries {
		text[q.ID] = norm(q.Text)
	}
	dev := map[string]bool{}
	for qid := range b.Splits["dev"] {
		dev[text[qid]] = true
	}
	for qid := range b.Splits["test"] {
		if dev[text[qid]] {
			t.Errorf("query text %q is in dev and test", text[qid])
		}
	}
	perFunc := map[string][2]int{}
	for _, q := range b.Queries {
		c := perFunc[q.Metadata["function"].(string)]
		if b.Splits["dev"][q.ID] != nil {
			c[0]++
		}
		c[1]++
		perFunc[q.Metadata["function"].(string)] = c
	}
	for fn, c := range perFunc {
		// round(0.3 n): 5 -> 2, 8 -> 2, 10 -> 3, 35 -> 11, 50 -> 15.
		if want := (3*c[1] + 5) / 10; c[0] != want {
			t.Errorf("function %s: %d of %d queries in dev, want %d", fn, c[0], c[1], want)
		}
	}
}

// TestGeneratedFilesUpToDate regenerates the benchmark from source/ into a temporary directory and
// compares it byte for byte with data/, and the README stats block with the source.
func TestGeneratedFilesUpToDate(t *testing.T) {
	funcs, err := gen.ReadSource(os.DirFS("source"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := gen.Build(funcs)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := b.Write(dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"corpus.jsonl", "queries.jsonl", "catalog.jsonl", "qrels/dev.tsv", "qrels/test.tsv"} {
		fresh, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		committed, err := os.ReadFile(filepath.Join("data", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fresh, committed) {
			t.Errorf("data/%s is stale: run go generate ./pkg/defaultbench", name)
		}
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := gen.ReplaceStats(string(readme), gen.StatsMarkdown(funcs, b))
	if err != nil {
		t.Fatal(err)
	}
	if want != string(readme) {
		t.Error("README.md stats block is stale: run go generate ./pkg/defaultbench")
	}
}

// TestDocCommentCounts checks the counts written in the package doc comment against the data.
func TestDocCommentCounts(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(f.Doc.Text()), " ")
	b := load(t)
	perPlatform := map[string]int{}
	funcs := map[string]bool{}
	for _, tool := range b.Tools {
		perPlatform[tool.Platform]++
		funcs[tool.Function] = true
	}
	want := []struct {
		pattern string
		n       int
	}{
		{`([\d,]+) tools`, len(b.Tools)},
		{`LangChain ([\d,]+)`, perPlatform[catalog.PlatformLangChain]},
		{`CrewAI ([\d,]+)`, perPlatform[catalog.PlatformCrewAI]},
		{`LlamaIndex ([\d,]+)`, perPlatform[catalog.PlatformLlamaIndex]},
		{`n8n ([\d,]+)\)`, perPlatform[catalog.PlatformN8n]},
		{`in ([\d,]+) functions`, len(funcs)},
		{`([\d,]+) queries,`, len(b.Queries)},
		{`([\d,]+) in dev`, len(b.Splits["dev"])},
		{`([\d,]+) in test`, len(b.Splits["test"])},
	}
	for _, w := range want {
		m := regexp.MustCompile(w.pattern).FindStringSubmatch(doc)
		if m == nil {
			t.Errorf("doc comment has no %q", w.pattern)
			continue
		}
		got, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
		if got != w.n {
			t.Errorf("doc comment says %q = %d, data has %d", w.pattern, got, w.n)
		}
	}
}

// TestQueriesNotTemplated guards the content requirement that retrieval must not be trivial: a
// good share of the queries shares no content word with the names of the tools relevant to them,
// and within a function few queries open with the same three words as another one (a filled
// template would make nearly all of them do so).
func TestQueriesNotTemplated(t *testing.T) {
	b := load(t)
	stop := map[string]bool{"the": true, "and": true, "for": true, "with": true, "from": true, "this": true,
		"that": true, "you": true, "are": true, "can": true, "tool": true}
	stems := func(s string) map[string]bool {
		out := map[string]bool{}
		for _, w := range catalog.SplitIdentifierWords(s) {
			if len(w) < 3 || stop[w] {
				continue
			}
			if len(w) > 5 {
				w = w[:5]
			}
			out[w] = true
		}
		return out
	}
	names := map[string]string{}
	for _, tool := range b.Tools {
		names[tool.ID] = tool.Name
	}
	disjoint := 0
	openings := map[string]map[string]int{} // function -> first three words -> queries
	for _, q := range b.Queries {
		split := "test"
		if b.Splits["dev"][q.ID] != nil {
			split = "dev"
		}
		qs := stems(q.Text)
		shared := false
		for _, id := range b.Relevant(split, q.ID) {
			for w := range stems(names[id]) {
				shared = shared || qs[w]
			}
		}
		if !shared {
			disjoint++
		}
		fn := q.Metadata["function"].(string)
		if openings[fn] == nil {
			openings[fn] = map[string]int{}
		}
		openings[fn][strings.Join(strings.Fields(strings.ToLower(q.Text))[:3], " ")]++
	}
	if share := float64(disjoint) / float64(len(b.Queries)); share < 0.25 {
		t.Errorf("only %.2f of the queries share no word with their tools' names, want >= 0.25", share)
	}
	for fn, byOpening := range openings {
		total, repeated := 0, 0
		for _, n := range byOpening {
			total += n
			if n > 1 {
				repeated += n
			}
		}
		if float64(repeated) > float64(total)/3 {
			t.Errorf("function %s: %d of %d queries share their first three words with another query", fn, repeated, total)
		}
	}
}

// BenchmarkLoad measures parsing the embedded benchmark, the start-up cost of the eval commands.
func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		if _, err := Load(); err != nil {
			b.Fatal(err)
		}
	}
}
