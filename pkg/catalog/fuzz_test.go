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
