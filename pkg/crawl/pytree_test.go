package crawl

import (
	"strings"
	"testing"
)

// TestPythonTreeWithoutPackage: a source tree without the platform's Python package is an error
// for LangChain and CrewAI (one package each) and a warning for LlamaIndex (one of many
// integration packages); the tree's own warnings and its source are recorded either way.
func TestPythonTreeWithoutPackage(t *testing.T) {
	tree := func() *Tree {
		return &Tree{Label: "pkgs/other-1.0", Files: map[string][]byte{"other/__init__.py": []byte("x = 1\n")},
			Warnings: []string{"pkgs/other-1.0: skipped a binary file"}}
	}
	for _, c := range []struct {
		name  string
		crawl func([]*Tree) (*PlatformResult, error)
		want  string
		isErr bool
	}{
		{"langchain", CrawlLangChain, "crawl langchain pkgs/other-1.0: no langchain_community/ Python package inside", true},
		{"crewai", CrawlCrewAI, "crawl crewai pkgs/other-1.0: no crewai_tools/ Python package inside", true},
		{"llamaindex", CrawlLlamaIndex, "crawl llamaindex pkgs/other-1.0: no llama_index/ Python package inside", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := c.crawl([]*Tree{tree()})
			if c.isErr {
				if err == nil || err.Error() != c.want {
					t.Fatalf("error %v, want %q", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			all := strings.Join(res.Warnings, "\n")
			for _, w := range []string{c.want, "skipped a binary file"} {
				if !strings.Contains(all, w) {
					t.Errorf("warnings %q lack %q", res.Warnings, w)
				}
			}
			if len(res.Sources) != 1 || res.Sources[0].Package != "other-1.0" || res.Sources[0].Path != "pkgs/other-1.0" {
				t.Errorf("sources %+v, want one named other-1.0 (the label's base) at pkgs/other-1.0", res.Sources)
			}
		})
	}
}
