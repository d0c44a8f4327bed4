package retrieve

import (
	"testing"

	"github.com/rated-dev/rated/internal/testassets"
	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/encode"
)

// TestDenseRealEncoders ranks a small tool corpus with each installed encoder: every query has
// one obviously right tool (human judgement), which must come first.
func TestDenseRealEncoders(t *testing.T) {
	lib := testassets.ORTLibrary(t)
	rt := encode.NewRuntime(lib)
	docs := []bench.Doc{
		{ID: "weather", Title: "OpenWeather", Text: "Get the current weather and the forecast for a city."},
		{ID: "stocks", Title: "Stock quotes", Text: "Real-time stock prices and market data for a ticker symbol."},
		{ID: "email", Title: "Gmail", Text: "Send, read and search email messages."},
		{ID: "translate", Title: "DeepL", Text: "Translate text between languages."},
		{ID: "flights", Title: "Flight search", Text: "Find flights between airports and compare fares."},
		{ID: "github", Title: "GitHub", Text: "Create issues and pull requests in a code repository."},
	}
	queries := map[string]string{
		"Will it rain in London tomorrow?":          "weather",
		"How much is one share of Apple right now?": "stocks",
		"Write a message to my boss at his inbox":   "email",
		"Say 'thank you' in Japanese":               "translate",
		"Cheapest way to fly from Paris to Rome":    "flights",
		"Open a bug report for my project":          "github",
	}
	for _, name := range []string{"bge-small-en-v1.5", "all-minilm-l6-v2"} {
		t.Run(name, func(t *testing.T) {
			m, err := encode.Open(testassets.Model(t, name), encode.Options{Runtime: rt})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			d, err := NewDense(m, docs, DenseOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var qs []string
			for q := range queries {
				qs = append(qs, q)
			}
			batch, err := d.SearchBatch(qs, 3)
			if err != nil {
				t.Fatal(err)
			}
			for i, q := range qs {
				if got := batch[i][0].ID; got != queries[q] {
					t.Errorf("%q: top tool %s (%v), want %s", q, got, batch[i], queries[q])
				}
				single, err := d.Search(q, 3)
				if err != nil {
					t.Fatal(err)
				}
				for r := range single {
					if single[r].ID != batch[i][r].ID {
						t.Errorf("%q: Search %v and SearchBatch %v differ", q, single, batch[i])
						break
					}
				}
			}
			v, err := d.QueryVector("Will it rain in London tomorrow?")
			if err != nil || len(v) != 384 {
				t.Fatalf("QueryVector: %d values, %v", len(v), err)
			}
		})
	}
}
