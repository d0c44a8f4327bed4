package catalog

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/rated-dev/rated/internal/fuzzcount"
)

// FuzzDecodeJSONL (seeds: the default benchmark's catalog and the synth fixture,
// testdata/fuzz/FuzzDecodeJSONL): any input is an error naming the line, or tools with valid,
// distinct ids that encode and decode back to themselves.
func FuzzDecodeJSONL(f *testing.F) {
	f.Add([]byte(`{"id":"n8n/slack/send","name":"send","platform":"n8n"}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzcount.Tick("FuzzDecodeJSONL")
		tools, err := DecodeJSONL(bytes.NewReader(data), "c.jsonl")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "c.jsonl:") {
				t.Fatalf("error names no line: %v", err)
			}
			return
		}
		// One record per non-blank line: a line holding two records, or one and garbage, is an
		// error, so no record is dropped silently.
		nonBlank := 0
		for _, l := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(bytes.TrimPrefix(l, []byte("\xef\xbb\xbf")))) > 0 {
				nonBlank++
			}
		}
		if len(tools) != nonBlank {
			t.Fatalf("%d tools from %d non-blank lines", len(tools), nonBlank)
		}
		seen := map[string]bool{}
		for _, tl := range tools {
			if err := ValidateID(tl.ID); err != nil || seen[tl.ID] {
				t.Fatalf("tool id %q accepted (%v, duplicate %v)", tl.ID, err, seen[tl.ID])
			}
			seen[tl.ID] = true
		}
		var buf bytes.Buffer
		if err := EncodeJSONL(&buf, tools); err != nil {
			t.Fatalf("decoded tools do not encode: %v", err)
		}
		again, err := DecodeJSONL(&buf, "again")
		if err != nil {
			t.Fatalf("encoded tools do not decode: %v", err)
		}
		if !reflect.DeepEqual(tools, again) {
			t.Fatalf("round trip changed the tools:\n%+v\n%+v", tools, again)
		}
	})
}

// FuzzProviderKey: any endpoint URL and n8n-looking id gives a key of one of the three kinds,
// never a panic, and a host key holds no character a host or a placeholder label cannot.
func FuzzProviderKey(f *testing.F) {
	for _, s := range [][2]string{{"https://{credentials.url}/x", "n8n/ghost/post.get"}, {"https://www.googleapis.com{resource}", "a"},
		{"{{$credentials.region.startsWith(\"cn-\") ? `https://a` : `https://b`}}", "n8n/aws/x"}, {"https://u:p@h.com:1/x", "n8n/@n8n/n8n-nodes-langchain/c:op"},
		{"https://[::1]:80/x", "n8n/node"}, {"{a}}.b{", "n8n//x"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, endpoint, id string) {
		k := ProviderKey(&Tool{ID: id, Platform: "n8n", Endpoints: []Endpoint{{URL: endpoint}}})
		switch {
		case strings.HasPrefix(k, "host:"):
			if h := k[len("host:"):]; h == "" || strings.ContainsAny(h, " `'\"/@") {
				t.Fatalf("%q: host key %q", endpoint, k)
			}
		case strings.HasPrefix(k, "n8n-node:"), k == "tool:"+id:
		default:
			t.Fatalf("%q, %q: key %q", endpoint, id, k)
		}
	})
}
