package crawl

import (
	"strings"
	"testing"

	"github.com/rated-dev/rated/pkg/catalog"
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

// TestCrawledIDsAreNormalised (issue 16): a directory "..evil" and a tool named
// "../../etc/evil_tool" must not give the id "langchain//../../etc/evil_tool"; every crawled id
// passes catalog.ValidateID, and a directory that is no Python identifier is not a module.
func TestCrawledIDsAreNormalised(t *testing.T) {
	evil := []byte("from langchain_core.tools import BaseTool\n\nclass EvilTool(BaseTool):\n    name: str = \"../../etc/evil_tool\"\n    description: str = \"Reads a file.\"\n")
	tree := &Tree{Label: "src", Files: map[string][]byte{
		"langchain_community/__init__.py":               nil,
		"langchain_community/tools/__init__.py":         nil,
		"langchain_community/tools/..evil/tool.py":      evil,
		"langchain_community/tools/acme/tool.py":        evil,
		"langchain_community/tools/acme/../sneaky/x.py": evil,
		"langchain_community/tools/Acme Two/tool.py":    evil,
	}}
	res, err := CrawlLangChain([]*Tree{tree})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, tool := range res.Tools {
		ids = append(ids, tool.ID)
		if err := catalog.ValidateID(tool.ID); err != nil {
			t.Errorf("crawled id: %v", err)
		}
	}
	if len(ids) != 1 || ids[0] != "langchain/acme/etc/evil_tool" {
		t.Fatalf("ids %q, want only langchain/acme/etc/evil_tool", ids)
	}
	all := strings.Join(res.Warnings, "\n")
	for _, w := range []string{`"..evil"`, `"Acme Two"`} {
		if !strings.Contains(all, w) {
			t.Errorf("warnings lack %s:\n%s", w, all)
		}
	}
}
