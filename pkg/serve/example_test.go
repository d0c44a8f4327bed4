package serve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/router"
	"github.com/rated-dev/rated/pkg/serve"
)

// An in-memory router (BM25, the static policy, no state on disk) behind the HTTP API on
// 127.0.0.1, and one POST /v1/select. Only the weather tool shares words with the query, and
// BM25 returns no tool that scores 0, so it is the only candidate although k is 2; lexical
// scores are divided by the top score, so its semantic score is 1. The static policy chooses
// the retriever's first candidate, with propensity 1.
func ExampleServer() {
	tools := []catalog.Tool{
		{ID: "demo/weather", Name: "weather forecast", Description: "Get the weather forecast for a city", Platform: "demo"},
		{ID: "demo/email", Name: "send email", Description: "Send an email message", Platform: "demo"},
		{ID: "demo/translate", Name: "translate", Description: "Translate text between languages", Platform: "demo"},
	}
	front, err := router.NewLexicalFrontend(64)
	if err != nil {
		panic(err)
	}
	r, err := router.New(context.Background(), router.Config{Frontend: front, Tools: tools,
		Policy: &bandit.Spec{Name: "static", Kind: "static"}})
	if err != nil {
		panic(err)
	}
	defer r.Close()
	srv := httptest.NewServer(serve.New(r, serve.Options{}).Handler())
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/v1/select", "application/json", strings.NewReader(`{"query": "weather forecast in Paris", "k": 2}`))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var sel serve.SelectResponse
	if err := json.NewDecoder(resp.Body).Decode(&sel); err != nil {
		panic(err)
	}
	for _, t := range sel.Tools {
		fmt.Printf("%s semantic %.3f propensity %.3f\n", t.ID, t.Semantic, t.Propensity)
	}
	// Output:
	// demo/weather semantic 1.000 propensity 1.000
}
