package synth

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/rated-dev/rated/internal/testassets"
	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/encode"
	"github.com/rated-dev/rated/pkg/retrieve"
)

// TestDenseBGESmallRealTools retrieves Real candidates and mines hard negatives over the ten real
// catalog tools of testdata with the installed bge-small-en-v1.5: each query has one obviously
// right tool (human judgement), which must rank first; the hard negative of a weather query whose
// positive is one of the two OpenWeatherMap tools must be the other one.
func TestDenseBGESmallRealTools(t *testing.T) {
	lib := testassets.ORTLibrary(t)
	dir := testassets.Model(t, "bge-small-en-v1.5")
	m, err := encode.Open(dir, encode.Options{Runtime: encode.NewRuntime(lib)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	tools, err := catalog.ReadJSONL(filepath.Join("testdata", "catalog.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := retrieve.NewDense(m, bench.DocsFromTools(tools), retrieve.DenseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"Email my boss the meeting notes with an attachment":               "n8n/n8n-nodes-base/gmail_send",
		"How do I say good morning in Spanish?":                            "n8n/n8n-nodes-base/google_translate",
		"Play me some songs by Taylor Swift":                               "llamaindex/llama-index-tools-spotify/spotify_search",
		"What is the share price of Apple today?":                          "llamaindex/llama-index-tools-yahoo-finance/stock_basic_info",
		"Who was the first emperor of Rome? Look it up in an encyclopedia": "langchain/langchain-community/wikipedia",
	}
	var queries []RealQuery
	for text := range want {
		queries = append(queries, RealQuery{ID: "g-" + text, Group: "g", Text: text})
	}
	pairs, err := RealCandidates(r, queries, tools, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(pairs) != 5*len(queries) {
		t.Fatalf("%d candidate pairs, want %d", len(pairs), 5*len(queries))
	}
	for i, p := range pairs {
		if p.RetrievalScore < -1-1e-5 || p.RetrievalScore > 1+1e-5 {
			t.Fatalf("%q / %s: score %g is not a cosine", p.Query.Text, p.ToolID, p.RetrievalScore)
		}
		if i%5 == 0 {
			if p.ToolID != want[p.Query.Text] {
				t.Errorf("%q: first candidate %s (cosine %.3f), want %s", p.Query.Text, p.ToolID, p.RetrievalScore, want[p.Query.Text])
			}
			continue
		}
		if prev := pairs[i-1]; prev.RetrievalScore < p.RetrievalScore {
			t.Fatalf("%q: candidates not in cosine order: %s %.4f before %s %.4f", p.Query.Text, prev.ToolID, prev.RetrievalScore, p.ToolID, p.RetrievalScore)
		}
	}
	ids := make([]string, len(tools))
	for i, tl := range tools {
		ids[i] = tl.ID
	}
	for pos, other := range map[string]string{
		"n8n/n8n-nodes-base/openweathermap":                "langchain/langchain-community/openweathermap_api",
		"langchain/langchain-community/openweathermap_api": "n8n/n8n-nodes-base/openweathermap",
	} {
		negs, err := MineNegatives(r, "Will it rain in Berlin tomorrow afternoon?", map[string]bool{pos: true}, ids, NegativeConfig{Hard: 1}, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if len(negs) != 1 || negs[0].ToolID != other {
			t.Errorf("positive %s: hard negatives %+v, want %s", pos, negs, other)
		}
	}
}
