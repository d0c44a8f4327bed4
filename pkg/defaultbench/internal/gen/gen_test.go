package gen

import (
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/rated-dev/rated/pkg/catalog"
)

const validYAML = `functions:
- id: demo.send
  summary: Send a demo message
  tools:
  - platform: langchain
    name: send_demo
    description: Sends  a demo
      message.
    endpoints: ["https://{team}.demo.example/api/send", https://demo.example/v1]
    auth: ["env:DEMO_TOKEN!", "credential:demoApi"]
    params: ["text:string! The text to send.", "channel:string"]
    tags: [demo]
  - platform: n8n
    name: "Demo: Send"
  - platform: llamaindex
    package: llama-index-tools-demo
    name: DemoToolSpec.send
    official: true
  queries: |
    please send a demo message to the team

    tell everyone in the demo channel hello there
    one two three four five
    pass the news along to the whole demo group now
    ping the demo crowd about the release today
`

func build(t *testing.T, src string) error {
	t.Helper()
	funcs, err := ReadSource(fstest.MapFS{"a.yaml": {Data: []byte(src)}})
	if err != nil {
		return err
	}
	_, err = Build(funcs)
	return err
}

func TestBuildValid(t *testing.T) {
	funcs, err := ReadSource(fstest.MapFS{"a.yaml": {Data: []byte(validYAML)}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Build(funcs)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Tools) != 3 || len(b.Queries) != 5 {
		t.Fatalf("%d tools, %d queries; want 3 and 5", len(b.Tools), len(b.Queries))
	}
	// Sorted by id: langchain/..., llamaindex/..., n8n/...
	lc := b.Tools[0]
	want := catalog.Tool{
		ID: "langchain/langchain-community/send_demo", Name: "send_demo", Description: "Sends a demo message.",
		Platform: "langchain", Package: "langchain-community", Function: "demo.send",
		Endpoints: []catalog.Endpoint{{URL: "https://{team}.demo.example/api/send", Templated: true}, {URL: "https://demo.example/v1"}},
		Auth:      []catalog.Credential{{Name: "DEMO_TOKEN", Kind: "env", Required: true}, {Name: "demoApi", Kind: "credential"}},
		Parameters: []catalog.Parameter{{Name: "text", Type: "string", Required: true, Description: "The text to send."},
			{Name: "channel", Type: "string"}},
		Tags: []string{"demo"},
	}
	if !reflect.DeepEqual(lc, want) {
		t.Errorf("tool\n got %+v\nwant %+v", lc, want)
	}
	if b.Tools[1].ID != "llamaindex/llama-index-tools-demo/demotoolspec.send" || !b.Tools[1].Official {
		t.Errorf("llamaindex tool = %+v", b.Tools[1])
	}
	if b.Tools[2].ID != "n8n/n8n-nodes-base/demo:-send" {
		t.Errorf("n8n tool id = %s", b.Tools[2].ID)
	}
	// round(0.3*5) = 2 in dev, 3 in test; each relevant to all three tools.
	if len(b.Splits["dev"]) != 2 || len(b.Splits["test"]) != 3 {
		t.Errorf("dev %d, test %d; want 2 and 3", len(b.Splits["dev"]), len(b.Splits["test"]))
	}
	for _, q := range b.Queries {
		rel := b.Splits["dev"][q.ID]
		if rel == nil {
			rel = b.Splits["test"][q.ID]
		}
		if len(rel) != 3 {
			t.Errorf("query %s has %d relevant tools, want 3", q.ID, len(rel))
		}
	}
	if b.Queries[0].ID != "q0001" || b.Queries[1].Text != "tell everyone in the demo channel hello there" {
		t.Errorf("queries = %+v", b.Queries[:2])
	}
}

func TestBuildRejects(t *testing.T) {
	cases := []struct {
		name, old, new, want string
	}{
		{"two tools", "  - platform: llamaindex\n    package: llama-index-tools-demo\n    name: DemoToolSpec.send\n    official: true\n", "", "2 tools, want at least 3"},
		{"one platform", "  - platform: n8n\n    name: \"Demo: Send\"\n  - platform: llamaindex\n", "  - platform: langchain\n    name: \"Demo: Send\"\n  - platform: langchain\n", "1 platform(s)"},
		{"unknown platform", "platform: n8n", "platform: zapier", `unknown platform "zapier"`},
		{"duplicate tool", "name: DemoToolSpec.send", "name: DemoToolSpec.send\n  - platform: n8n\n    name: \"DEMO: send\"", "duplicate tool id"},
		{"short query", "one two three four five", "one two three four", "has 4 words"},
		{"duplicate query", "ping the demo crowd about the release today", "Please, send a demo message to the team!", "duplicates one of function demo.send"},
		{"bad auth", "env:DEMO_TOKEN!", "DEMO_TOKEN", "want kind:NAME"},
		{"bad param", "channel:string", "channel", "want name:type"},
		{"bad endpoint", "https://demo.example/v1", "ftp://demo.example", "not an http(s) URL"},
		{"no package", "    package: llama-index-tools-demo\n", "", "no default package"},
		{"few queries", "    ping the demo crowd about the release today\n", "", "4 queries, want at least 5"},
		{"unknown field", "official: true", "offical: true", "field offical not found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := strings.Replace(validYAML, c.old, c.new, 1)
			if src == validYAML {
				t.Fatalf("test case does not change the source")
			}
			err := build(t, src)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
	again := strings.NewReplacer("    please ", "    now please ", "    tell ", "    now tell ", "    one ", "    now one ",
		"    pass ", "    now pass ", "    ping ", "    now ping ").Replace(strings.TrimPrefix(validYAML, "functions:\n"))
	dup := validYAML + again
	if err := build(t, dup); err == nil || !strings.Contains(err.Error(), "duplicate function id") {
		t.Errorf("duplicate function: %v", err)
	}
}

func TestNormalizeQuery(t *testing.T) {
	cases := map[string]string{
		"  Send 'hello' to #General!! ": "send hello to general",
		"what's 2+2?":                   "what s 2 2",
		"Grüße aus Köln":                "grüße aus köln",
	}
	for in, want := range cases {
		if got := NormalizeQuery(in); got != want {
			t.Errorf("NormalizeQuery(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDevQueriesShare(t *testing.T) {
	for n, want := range map[int]int{5: 2, 8: 2, 10: 3, 12: 4, 35: 11, 50: 15} {
		qs := make([]string, n)
		for i := range qs {
			qs[i] = "query number " + strings.Repeat("x", i+1)
		}
		dev := devQueries(qs)
		if len(dev) != want {
			t.Errorf("n=%d: %d dev queries, want %d", n, len(dev), want)
		}
		// The choice depends on the text only: reversing the order gives the same set.
		rev := make([]string, n)
		for i, q := range qs {
			rev[n-1-i] = q
		}
		if !reflect.DeepEqual(devQueries(rev), dev) {
			t.Errorf("n=%d: dev set depends on order", n)
		}
	}
}

func TestReplaceStats(t *testing.T) {
	in := "head\n" + StatsBegin + "\nold\n" + StatsEnd + "\ntail\n"
	got, err := ReplaceStats(in, "new\n")
	if err != nil || got != "head\n"+StatsBegin+"\nnew\n"+StatsEnd+"\ntail\n" {
		t.Fatalf("ReplaceStats = %q, %v", got, err)
	}
	if _, err := ReplaceStats("no markers", "x"); err == nil {
		t.Fatal("want error without markers")
	}
}
