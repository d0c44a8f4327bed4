package catalog

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestSplitIdentifierWords(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"getHTTPResponse_code", []string{"get", "http", "response", "code"}},
		{"SlackSendMessage", []string{"slack", "send", "message"}},
		{"google-sheets v2", []string{"google", "sheets", "v2"}},
		{"", nil},
	}
	for _, c := range cases {
		if got := SplitIdentifierWords(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("SplitIdentifierWords(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestLexicalSimilarity(t *testing.T) {
	cases := []struct {
		a, b string
		want float64
	}{
		// {weath, forec} vs {get, weath, forec, city}: 2/sqrt(2*4)
		{"weather_forecast", "Get the weather forecast for a city", 2 / math.Sqrt(8)},
		{"send_email", "Send email", 1},
		{"slack", "Query a SQL database", 0},
		{"", "anything", 0},
	}
	for _, c := range cases {
		got, _ := LexicalSimilarity{}.Similarity(c.a, c.b)
		if math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Similarity(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// fixedSim returns a fixed similarity so the prior can be checked by hand.
type fixedSim float64

func (fixedSim) Name() string                                 { return "fixed" }
func (f fixedSim) Similarity(string, string) (float64, error) { return float64(f), nil }

func TestComputePriorsByHand(t *testing.T) {
	tools := []Tool{
		{ID: "a", Name: "a", Platform: "n8n", Description: strings.Repeat("x", 10), Tags: []string{"abcd"}},
		{ID: "b", Name: "b", Platform: "langchain", Description: strings.Repeat("x", 20), Tags: []string{"ab"}},
		{ID: "c", Name: "c", Platform: "elsewhere", Official: true, Description: strings.Repeat("x", 30)},
	}
	if err := ComputePriors(tools, PaperPriorConfig(), fixedSim(0.4)); err != nil {
		t.Fatal(err)
	}
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	// Medians: description 20, tag string 2.
	want := []struct{ src, q float64 }{
		{0.8, 0.6*sig(10.0/20-1) + 0.4*sig(4.0/2-1)},
		{0.9, 0.6*sig(0) + 0.4*sig(0)},
		{1.0, 0.6*sig(30.0/20-1) + 0.4*sig(-1)},
	}
	for i, w := range want {
		p := tools[i].Prior
		v := 0.5*0.4 + 0.3*w.src + 0.2*w.q
		if math.Abs(p.Value-v) > 1e-12 || p.SourceWeight != w.src || math.Abs(p.Quality-w.q) > 1e-12 {
			t.Errorf("tool %s: prior %+v, want value %v source %v quality %v", tools[i].ID, p, v, w.src, w.q)
		}
		if p.ConsistencyMethod != "fixed" {
			t.Errorf("method = %q", p.ConsistencyMethod)
		}
	}
}

// TestJSONLRefusesWhatDecodedSilently: each record loaded before, with its meaning changed or
// with a field that cannot mean anything; each is now an error naming the line and the field.
func TestJSONLRefusesWhatDecodedSilently(t *testing.T) {
	const ok = `"name":"a","platform":"x"`
	for name, c := range map[string]struct{ line, want string }{
		"repeated key":         {`{"id":"a/b/c","id":"x/y/z",` + ok + `}`, `:1: malformed tool record: id: appears more than once`},
		"key in another case":  {`{"ID":"a",` + ok + `}`, `:1: malformed tool record: ID: is not a field of a tool record (field names are case-sensitive: "id")`},
		"nested key case":      {`{"id":"a",` + ok + `,"endpoints":[{"URL":"https://x.io"}]}`, `endpoints[0].URL: is not a field`},
		"NUL in the name":      {`{"id":"a","name":"a\u0000b","platform":"x"}`, `tool a: name: holds a NUL at byte 2`},
		"lone surrogate":       {`{"id":"a","name":"a\udc80","platform":"x"}`, `tool a: name: holds U+FFFD at byte 2`},
		"NUL in a description": {`{"id":"a",` + ok + `,"description":"x\u0000"}`, `tool a: description: holds a NUL`},
		"empty endpoint":       {`{"id":"a",` + ok + `,"endpoints":[{"url":" "}]}`, `tool a: endpoints[0].url is empty`},
		"empty credential":     {`{"id":"a",` + ok + `,"auth":[{"name":"","kind":"env","required":true}]}`, `tool a: auth[0].name is empty`},
		"repeated parameter":   {`{"id":"a",` + ok + `,"parameters":[{"name":"q"},{"name":"q"}]}`, `tool a: parameters[1].name "q" repeats parameters[0]`},
		"unknown probe status": {`{"id":"a",` + ok + `,"probe":{"status":"bogus","checked_at":"2026-01-01T00:00:00Z"}}`, `tool a: probe.status "bogus"`},
	} {
		_, err := DecodeJSONL(strings.NewReader(c.line+"\n"), "cat.jsonl")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	// A multi-line description keeps its new lines and tabs.
	if _, err := DecodeJSONL(strings.NewReader(`{"id":"a",`+ok+`,"description":"one\ntwo\tthree"}`+"\n"), "cat.jsonl"); err != nil {
		t.Errorf("a description with new lines: %v", err)
	}
}

func TestPriorConfigValidate(t *testing.T) {
	bad := PaperPriorConfig()
	bad.QualityWeight = 0.3
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "sum to 1") {
		t.Fatalf("expected sum error, got %v", err)
	}
	if err := PaperPriorConfig().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestJSONLRoundTripAndErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "catalog.jsonl")
	tools := []Tool{{ID: "n8n/slack/send", Name: "send", Platform: "n8n", Tags: []string{"chat"},
		Endpoints: []Endpoint{{URL: "https://slack.com/api"}}}}
	if err := WriteJSONL(path, tools); err != nil {
		t.Fatal(err)
	}
	got, err := ReadJSONL(path)
	if err != nil || !reflect.DeepEqual(got, tools) {
		t.Fatalf("round trip: %v %+v", err, got)
	}
	cases := map[string]string{
		"malformed": "{\"id\":\"a\",\"name\":\"a\",\"platform\":\"x\"}\n{broken\n",
		"duplicate": "{\"id\":\"a\",\"name\":\"a\",\"platform\":\"x\"}\n\n{\"id\":\"a\",\"name\":\"b\",\"platform\":\"x\"}\n",
		"missing":   "{\"id\":\"a\",\"platform\":\"x\"}\n",
		// Two records on one line, and a record followed by garbage: Decode alone reads the first.
		"two on a line": "{\"id\":\"a\",\"name\":\"a\",\"platform\":\"x\"}\n{\"id\":\"b\",\"name\":\"b\",\"platform\":\"x\"} {\"id\":\"c\",\"name\":\"c\",\"platform\":\"x\"}\n",
		"garbage after": "{\"id\":\"a\",\"name\":\"a\",\"platform\":\"x\"}garbage\n",
	}
	wantLine := map[string]string{"malformed": ":2:", "duplicate": ":3:", "missing": ":1:", "two on a line": ":2:", "garbage after": ":1:"}
	for name, body := range cases {
		p := filepath.Join(dir, name+".jsonl")
		os.WriteFile(p, []byte(body), 0o644)
		_, err := ReadJSONL(p)
		if err == nil || !strings.Contains(err.Error(), p+wantLine[name]) {
			t.Errorf("%s: error %v should name %s%s", name, err, p, wantLine[name])
		}
	}
}

func TestProviderKey(t *testing.T) {
	cases := []struct {
		tool Tool
		want string
	}{
		{Tool{ID: "a", Endpoints: []Endpoint{{URL: "https://API.GitHub.com/repos/x"}}}, "host:api.github.com"},
		{Tool{ID: "b", Endpoints: []Endpoint{{URL: "https://{resource}.cognitiveservices.azure.com/x", Templated: true}}}, "host:{resource}.cognitiveservices.azure.com"},
		{Tool{ID: "c", Endpoints: []Endpoint{{URL: "api.example.org/v1"}}}, "host:api.example.org"},
		{Tool{ID: "n8n/n8n-nodes-base/mysql:-execute-sql", Platform: "n8n"}, "n8n-node:n8n-nodes-base/mysql"},
		{Tool{ID: "n8n/@n8n/n8n-nodes-langchain/calculator", Platform: "n8n"}, "n8n-node:@n8n/n8n-nodes-langchain/calculator"},
		{Tool{ID: "langchain/langchain-community/terminal", Platform: "langchain"}, "tool:langchain/langchain-community/terminal"},
		// An n8n tool whose id is not n8n/<package>/<node> (added through rated serve's API)
		// is a provider of its own; this panicked (found by serve's FuzzPutToolHandler).
		{Tool{ID: "x/y/z", Platform: "n8n"}, "tool:x/y/z"},
		{Tool{ID: "n8n/node", Platform: "n8n"}, "tool:n8n/node"},
		// The crawler's ids are n8n/<node>/<operation>: one provider per node (each tool was a
		// provider of its own: 483 keys for 124 nodes in the crawled catalog).
		{Tool{ID: "n8n/mysql/executequery", Platform: "n8n"}, "n8n-node:mysql"},
		{Tool{ID: "n8n/mysql/insert", Platform: "n8n"}, "n8n-node:mysql"},
		// A host that is a placeholder as a whole is a self-hosted service the user points at:
		// no provider (138 tools of 12 unrelated services shared "{credentials.url}"); the
		// node decides.
		{Tool{ID: "n8n/discourse/post.create", Platform: "n8n", Endpoints: []Endpoint{{URL: "{credentials.url}/posts.json", Templated: true}}}, "n8n-node:discourse"},
		{Tool{ID: "n8n/ghost/post.get", Platform: "n8n", Endpoints: []Endpoint{{URL: "https://{credentials.url}/ghost/api", Templated: true}}}, "n8n-node:ghost"},
		{Tool{ID: "d", Endpoints: []Endpoint{{URL: "https://{store}/wp-json", Templated: true}}}, "tool:d"},
		// A placeholder glued after the host is not part of it; ports and user info go.
		{Tool{ID: "e", Endpoints: []Endpoint{{URL: "https://www.googleapis.com{resource}", Templated: true}}}, "host:www.googleapis.com"},
		{Tool{ID: "f", Endpoints: []Endpoint{{URL: "https://{r}.api.x.com:8443/v1", Templated: true}}}, "host:{r}.api.x.com"},
		{Tool{ID: "g", Endpoints: []Endpoint{{URL: "https://u:p@API.x.com:8080/v1"}}}, "host:api.x.com"},
		{Tool{ID: "h", Endpoints: []Endpoint{{URL: "https://{index}.svc.{environment}.pinecone.io/query", Templated: true}}}, "host:{index}.svc.{environment}.pinecone.io"},
		// An expression is not a host; the next endpoint that names one decides.
		{Tool{ID: "i", Endpoints: []Endpoint{{URL: "{{$credentials.region.startsWith(\"cn-\") ? `https://sts.cn` : `https://sts.com`}}", Templated: true}, {URL: "https://sts.amazonaws.com"}}}, "host:sts.amazonaws.com"},
	}
	for _, c := range cases {
		if got := ProviderKey(&c.tool); got != c.want {
			t.Errorf("%s: %q, want %q", c.tool.ID, got, c.want)
		}
	}
}

// TestValidateID: ids are file-name and TREC safe: no empty, "." or ".." segment, no white
// space, control character, backslash or U+FFFD (issue 16: `langchain//../../etc/evil_tool`).
func TestValidateID(t *testing.T) {
	for _, id := range []string{"a", "n8n/slack/send", "n8n/@n8n/n8n-nodes-langchain/wolfram|alpha", "llamaindex/x:Spec/fn.name", "a.b/..c/d..", "日本/ツール"} {
		if err := ValidateID(id); err != nil {
			t.Errorf("ValidateID(%q) = %v, want nil", id, err)
		}
	}
	for id, want := range map[string]string{
		"langchain//../../etc/evil_tool": "empty segment",
		"langchain/x/../../etc/evil":     `".." segment`,
		"langchain/./x":                  `"." segment`,
		"/etc/passwd":                    "empty segment",
		"a/b/":                           "empty segment",
		"a b":                            "white space",
		"a\tb":                           "white space",
		"a\x00b":                         "control character",
		"a\\b":                           "backslash",
		"a\ufffdb":                       "U+FFFD",
		"":                               "empty",
		"a\xffb":                         "invalid UTF-8",
	} {
		err := ValidateID(id)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ValidateID(%q) = %v, want an error with %q", id, err, want)
		}
	}
}

// TestMakeIDNormalises: whatever the crawled parts hold, MakeID gives an id ValidateID accepts,
// and neither part can add "." or ".." segments.
func TestMakeIDNormalises(t *testing.T) {
	cases := map[[3]string]string{
		{"langchain", "", "../../etc/evil_tool"}:         "langchain/_/etc/evil_tool",
		{"langchain", "..", "x"}:                         "langchain/_/x",
		{"n8n", "@n8n/n8n-nodes-langchain", "Calc Tool"}: "n8n/@n8n/n8n-nodes-langchain/calc-tool",
		{"n8n", "a//b/./c", "x"}:                         "n8n/a/b/c/x",
		{"crewai", "Tools", "Send\tMail\x00Now"}:         "crewai/tools/send-mail-now",
		{"crewai", "t", "bad\xffbyte"}:                   "crewai/t/bad-byte",
		{"crewai", "t", ".."}:                            "crewai/t/_",
	}
	for in, want := range cases {
		got := MakeID(in[0], in[1], in[2])
		if got != want {
			t.Errorf("MakeID%q = %q, want %q", in, got, want)
		}
		if err := ValidateID(got); err != nil {
			t.Errorf("MakeID%q = %q, which ValidateID refuses: %v", in, got, err)
		}
	}
}

// TestReadJSONLRefusesBadIDs: a catalog line with an unsafe id or invalid UTF-8 is an error
// naming the line; a leading byte-order mark is skipped.
func TestReadJSONLRefusesBadIDs(t *testing.T) {
	dir := t.TempDir()
	for body, want := range map[string]string{
		"{\"id\":\"langchain//../../etc/evil_tool\",\"name\":\"a\",\"platform\":\"x\"}\n":                          ":1: tool id",
		"{\"id\":\"a\",\"name\":\"a\",\"platform\":\"x\"}\n{\"id\":\"b\xff\",\"name\":\"b\",\"platform\":\"x\"}\n": ":2: invalid UTF-8",
	} {
		p := filepath.Join(dir, "c.jsonl")
		os.WriteFile(p, []byte(body), 0o644)
		if _, err := ReadJSONL(p); err == nil || !strings.Contains(err.Error(), p+want) {
			t.Errorf("error %v, want %q", err, p+want)
		}
	}
	p := filepath.Join(dir, "bom.jsonl")
	os.WriteFile(p, []byte("\ufeff{\"id\":\"a\",\"name\":\"a\",\"platform\":\"x\"}\n"), 0o644)
	if tools, err := ReadJSONL(p); err != nil || len(tools) != 1 {
		t.Errorf("BOM: %v", err)
	}
}

// TestWriteJSONLRefusesInvalidTools: nothing is written when a record would not read back.
func TestWriteJSONLRefusesInvalidTools(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.jsonl")
	err := WriteJSONL(p, []Tool{{ID: "a", Name: "a", Platform: "x"}, {ID: "x//../y", Name: "b", Platform: "x"}})
	if err == nil || !strings.Contains(err.Error(), "record 2") {
		t.Fatalf("error %v", err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Fatalf("catalog written: %v", err)
	}
}

// TestComputePriorsRefusesNonFiniteSimilarity: a NaN similarity passed math.Max/Min's clamp and
// failed only when the catalog was encoded, after a crawl's probes had run.
func TestComputePriorsRefusesNonFiniteSimilarity(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1)} {
		tools := []Tool{{ID: "n8n/a/b", Name: "b", Platform: "n8n"}}
		err := ComputePriors(tools, PaperPriorConfig(), fixedSim(v))
		if err == nil || !strings.Contains(err.Error(), "n8n/a/b") {
			t.Errorf("similarity %v: error %v, want one naming the tool", v, err)
		}
	}
}
