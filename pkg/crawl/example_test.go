package crawl_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/rated-dev/rated/pkg/crawl"
)

// An n8n package reduced to its node catalog, held in memory (LoadTree would read the same from
// an npm tarball, a directory or a bare git directory). Each operation of the weather node is
// one tool, named by the operation's action, with the node's base URL as its endpoint; the
// trigger node is not a callable tool and is left out. Without credentials.json the crawl warns
// that credential endpoints are unknown.
func ExampleCrawlN8n() {
	tree := &crawl.Tree{Label: "n8n-nodes-demo", Files: map[string][]byte{
		"package.json": []byte(`{"name": "n8n-nodes-demo", "version": "0.1.0"}`),
		"dist/types/nodes.json": []byte(`[
			{"name": "weather", "displayName": "Weather", "version": 1, "group": ["transform"],
			 "description": "Weather by city.",
			 "requestDefaults": {"baseURL": "https://api.weather.example/v1"},
			 "properties": [{"name": "operation", "type": "options", "options": [
				{"name": "Current", "value": "current", "action": "Get the current weather"},
				{"name": "Forecast", "value": "forecast", "action": "Get a 5-day forecast"}]}]},
			{"name": "weatherTrigger", "displayName": "Weather Trigger", "version": 1, "group": ["trigger"]}]`),
	}}
	res, err := crawl.CrawlN8n([]*crawl.Tree{tree})
	if err != nil {
		panic(err)
	}
	for _, t := range res.Tools {
		fmt.Printf("%s | %s | %s | %s\n", t.ID, t.Name, t.Description, t.Endpoints[0].URL)
	}
	fmt.Println(res.Warnings)
	// Output:
	// n8n/weather/current | Weather: Get the current weather | Get the current weather. Weather by city. | https://api.weather.example/v1
	// n8n/weather/forecast | Weather: Get a 5-day forecast | Get a 5-day forecast. Weather by city. | https://api.weather.example/v1
	// [n8n-nodes-demo: no dist/types/credentials.json: credential endpoints unknown]
}

// Health checks against a local server: 401 means the endpoint exists but needs a credential,
// 404 that it is gone, and a 5xx is retried (Retries: 1) so a server that fails once and then
// answers is reachable. Sleep is injected so the backoff does not wait.
func ExampleProber_ProbeURL() {
	var failedOnce atomic.Bool // the handler runs on the server's goroutines
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/private":
			w.WriteHeader(http.StatusUnauthorized)
		case "/gone":
			w.WriteHeader(http.StatusNotFound)
		case "/flaky":
			if failedOnce.CompareAndSwap(false, true) {
				w.WriteHeader(http.StatusServiceUnavailable)
			}
		}
	}))
	defer srv.Close()
	p := &crawl.Prober{Client: srv.Client(), Retries: 1,
		Sleep: func(context.Context, time.Duration) error { return nil }}
	for _, path := range []string{"/ok", "/private", "/gone", "/flaky"} {
		res := p.ProbeURL(context.Background(), srv.URL+path)
		fmt.Println(path, res.Status, res.HTTPCode)
	}
	// Output:
	// /ok reachable 200
	// /private needs_auth 401
	// /gone broken 404
	// /flaky reachable 200
}
