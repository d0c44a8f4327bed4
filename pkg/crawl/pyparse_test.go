package crawl

import (
	"strings"
	"testing"
)

func TestLexPythonStrings(t *testing.T) {
	cases := []struct {
		name, src, want string
		runtime         bool
	}{
		{"implicit concatenation", `x = ("Get the weather "
    'for a city. '
    "Input is a city name.")`, "Get the weather for a city. Input is a city name.", false},
		{"triple quoted", "x = \"\"\"Line one\n  line two\"\"\"", "Line one\n  line two", false},
		{"escapes", `x = "tab\there\nnew \"q\" \x41\u00e9 \d"`, "tab\there\nnew \"q\" A\u00e9 \\d", false},
		{"raw string", `x = r"C:\new\d"`, `C:\new\d`, false},
		{"f-string without placeholders", `x = f"Search {{the}} web"`, "Search {the} web", false},
		{"f-string with placeholder", `x = f"Search {site} pages"`, "Search {site} pages", true},
		{"plus concatenation", `x = "a" + "b" + 'c'`, "abc", false},
		{"format call", `x = "Hello {}".format(name)`, "Hello {}", true},
		{"percent formatting", `x = "Hello %s" % name`, "Hello %s", true},
		{"backslash continuation", "x = \"a\" \\\n    \"b\"", "ab", false},
		{"strip", `x = """  padded  """.strip()`, "padded", false},
		{"Field default", `x = Field(default="from field", description="not this")`, "from field", false},
		{"Field positional", `x = Field("positional")`, "positional", false},
		{"dedent", `x = dedent("""
    Indented
      more
    """)`, "\nIndented\n  more\n", false},
		{"unicode prefix", `x = u"unicode"`, "unicode", false},
	}
	for _, c := range cases {
		m, err := parsePython("t.py", "t", false, []byte(c.src))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		got, rt, ok := newPyIndex().resolveString(m, m.Assigns["x"], 0)
		if !ok || got != c.want || rt != c.runtime {
			t.Errorf("%s: got %q runtime=%v ok=%v, want %q runtime=%v", c.name, got, rt, ok, c.want, c.runtime)
		}
	}
}

func TestParsePythonClassesAndImports(t *testing.T) {
	src := `"""Module doc."""
from __future__ import annotations
import os
from typing import Optional, Type
from .prompt import (
    SEARCH_PROMPT as PROMPT,
    OTHER,
)
from ..base import Base
try:
    import requests
except ImportError:  # pragma: no cover
    requests = None

@deprecated("0.1")
class SearchTool(Base, Generic[T], metaclass=Meta):
    """Searches things."""

    name: str = "search"
    description: str = PROMPT
    args_schema: Type[BaseModel] = SearchInput
    count: int = 3

    class Config:
        extra = "forbid"
        name = "not an attribute of SearchTool"

    def _run(self, query: str, k: int = 3, *, flag=False) -> str:
        """Run the search.

        Args:
            query: what to look for
        """
        def inner():
            name = "not a class attribute"
        return query

    async def _arun(self, query):
        return 1
`
	m, err := parsePython("pkg/tools/search/tool.py", "pkg.tools.search.tool", false, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if m.Imports["PROMPT"] != "pkg.tools.search.prompt.SEARCH_PROMPT" || m.Imports["OTHER"] != "pkg.tools.search.prompt.OTHER" {
		t.Errorf("relative import: %v", m.Imports)
	}
	if m.Imports["Base"] != "pkg.tools.base.Base" || m.Imports["os"] != "os" || m.Imports["requests"] != "requests" {
		t.Errorf("imports: %v", m.Imports)
	}
	if len(m.Classes) != 1 {
		t.Fatalf("classes = %d, want 1 (nested Config is not top-level)", len(m.Classes))
	}
	c := m.Classes[0]
	if c.Name != "SearchTool" || strings.Join(c.Bases, ",") != "Base,Generic" || c.Doc != "Searches things." {
		t.Errorf("class = %q bases %v doc %q", c.Name, c.Bases, c.Doc)
	}
	if c.Attrs["name"].Str != "search" || c.Attrs["description"].Name != "PROMPT" || c.Attrs["count"].Kind != exprConst {
		t.Errorf("attrs: name %+v description %+v", c.Attrs["name"], c.Attrs["description"])
	}
	run := c.Methods["_run"]
	if run == nil || strings.Join(run.Params, ",") != "self,query,k,flag" || !run.Defaulted["k"] || run.Defaulted["query"] {
		t.Fatalf("_run = %+v", run)
	}
	if cleanDoc(run.Doc) != "Run the search." {
		t.Errorf("cleanDoc = %q", cleanDoc(run.Doc))
	}
	if c.Methods["_arun"] == nil {
		t.Error("async def not recorded")
	}
}

func TestParsePythonSyntaxErrors(t *testing.T) {
	cases := map[string]string{
		"unterminated string": "x = \"abc\n",
		"unterminated triple": "x = '''abc\n",
		"unmatched bracket":   "x = (1, 2]]\n",
		"open bracket at EOF": "x = foo(1,\n",
		"bad dedent":          "class A:\n        x = 1\n    y = 2\n",
	}
	for name, src := range cases {
		if _, err := parsePython("bad.py", "bad", false, []byte(src)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestFindEnvReads(t *testing.T) {
	src := `
import os
key = os.environ["ACME_KEY"]
opt = os.environ.get("ACME_OPT", "x")
gv = os.getenv("ACME_GETENV")
values["k"] = get_from_dict_or_env(values, "k", "ACME_REQUIRED")
values["d"] = get_from_dict_or_env(values, "d", "ACME_DEFAULTED", default="")
values["p"] = get_from_dict_or_env(values, "p", "ACME_POSDEFAULT", "x")
lower = os.getenv("lowercase_is_not_env")
`
	m, err := parsePython("e.py", "e", false, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []envRead{{"ACME_KEY", false}, {"ACME_OPT", true}, {"ACME_GETENV", true}, {"ACME_REQUIRED", false}, {"ACME_DEFAULTED", true}, {"ACME_POSDEFAULT", true}}
	if len(m.EnvVars) != len(want) {
		t.Fatalf("env = %+v", m.EnvVars)
	}
	for i := range want {
		if m.EnvVars[i] != want[i] {
			t.Errorf("env[%d] = %+v, want %+v", i, m.EnvVars[i], want[i])
		}
	}
}

func TestEndpointFromURL(t *testing.T) {
	cases := []struct {
		in        string
		ok        bool
		templated bool
	}{
		{"https://api.search.brave.com/res/v1/web/search", true, false},
		{"https://{instance}.atlassian.net/rest", true, true},
		{"https://example.com/x", false, false},
		{"https://docs.n8n.io/integrations", false, false},
		{"http://localhost:8080", false, false},
		{"=https://{credentials.domain}/api", true, true},
		{"ftp://files.acme.io", false, false},
		{"https://nodot/", false, false},
	}
	for _, c := range cases {
		ep, ok := endpointFromURL(c.in)
		if ok != c.ok || (ok && ep.Templated != c.templated) {
			t.Errorf("endpointFromURL(%q) = %+v, %v; want ok=%v templated=%v", c.in, ep, ok, c.ok, c.templated)
		}
	}
}

func TestEndpointFromURLHostsAndPaths(t *testing.T) {
	cases := []struct {
		in        string
		ok        bool
		templated bool
	}{
		{"https://api-eu.dhl.com{path}", true, false},
		{"https://api.stripe.com/v1{endpoint}", true, false},
		{"https://{service}.{region}.amazonaws.com", true, true},
		{"https://api.beeminder.com/#attributes-2", false, false},
		{"https://developers.google.com/docs/api/reference/rest/v1/documents", false, false},
		{"https://myblog.com/wp-json/wp/v2/posts/1", false, false},
	}
	for _, c := range cases {
		ep, ok := endpointFromURL(c.in)
		if ok != c.ok || (ok && ep.Templated != c.templated) {
			t.Errorf("endpointFromURL(%q) = %+v, %v; want ok=%v templated=%v", c.in, ep, ok, c.ok, c.templated)
		}
	}
}

func TestJSEndpoints(t *testing.T) {
	src := "const base = `https://api.acme.test/v2${endpoint}`;\n" +
		"const page = `https://app.acme.test/client/${id}`;\n" + // a page link with a placeholder: still a request URL
		"const re = 'https://acme.test/([a-z]+)/.*';\n" + // a regular expression
		"const api = \"https://api.other.test\";\n" +
		"const web = 'https://www.acme.test/pricing';\n" + // a web page
		"const host = `https://${credentials.subdomain}.acme.test/api`;\n"
	got := jsEndpoints([]byte(src))
	want := []string{"https://api.acme.test/v2{endpoint}", "https://app.acme.test/client/{id}", "https://{credentials.subdomain}.acme.test/api", "https://api.other.test"}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %v", got, want)
	}
	for i, w := range want {
		if got[i].URL != w || got[i].Templated != (i == 2) {
			t.Errorf("endpoint %d = %+v, want %s templated=%v", i, got[i], w, i == 2)
		}
	}
}
