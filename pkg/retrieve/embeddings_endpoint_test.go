package retrieve

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rated-dev/rated/pkg/bench"
)

// fakeEmbeddingsServer answers /v1/embeddings on 127.0.0.1 with vectors from table (in reverse
// index order, as servers may), and records the requests.
type fakeEmbeddingsServer struct {
	table    map[string][]float64
	requests [][]string
	auth     []string
	failures atomic.Int32 // answer 503 this many times first
}

func (f *fakeEmbeddingsServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	if f.failures.Add(-1) >= 0 {
		w.Header().Set("Retry-After", "7")
		http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusServiceUnavailable)
		return
	}
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "ada-test" {
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"error":{"message":"bad request: unknown model"}}`))
		return
	}
	f.requests = append(f.requests, req.Input)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	type item struct {
		Index     int       `json:"index"`
		Embedding []float64 `json:"embedding"`
	}
	var data []item
	for i := len(req.Input) - 1; i >= 0; i-- {
		v, ok := f.table[req.Input[i]]
		if !ok {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":{"message":"no vector for ` + req.Input[i] + `"}}`))
			return
		}
		data = append(data, item{Index: i, Embedding: v})
	}
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model})
}

func newEndpoint(t *testing.T, srv *httptest.Server, mutate func(*EndpointConfig)) *EmbeddingsEndpoint {
	t.Helper()
	cfg := EndpointConfig{BaseURL: srv.URL + "/v1", Model: "ada-test", APIKey: "k-123", BatchSize: 2,
		QueryPrefix: "query: ", DocPrefix: "passage: ", Backoff: time.Millisecond, Client: srv.Client()}
	if mutate != nil {
		mutate(&cfg)
	}
	e, err := NewEmbeddingsEndpoint(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestEmbeddingsEndpointDense(t *testing.T) {
	fake := &fakeEmbeddingsServer{table: map[string][]float64{
		"passage: Weather: forecast": {2, 0, 0},
		"passage: Stocks: quotes":    {0, 3, 0},
		"passage: Maps: routes":      {0, 0, 1},
		"query: rain tomorrow?":      {4, 0, 3}, // normalised: (0.8, 0, 0.6)
	}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	e := newEndpoint(t, srv, nil)
	docs := []bench.Doc{
		{ID: "w", Title: "Weather", Text: "forecast"},
		{ID: "s", Title: "Stocks", Text: "quotes"},
		{ID: "m", Title: "Maps", Text: "routes"},
	}
	d, err := NewDense(e, docs, DenseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// 3 documents in batches of 2: two requests, texts prefixed, order kept.
	if len(fake.requests) != 2 || len(fake.requests[0]) != 2 || fake.requests[1][0] != "passage: Maps: routes" {
		t.Errorf("requests = %q", fake.requests)
	}
	if fake.auth[0] != "Bearer k-123" {
		t.Errorf("Authorization = %q", fake.auth[0])
	}
	if e.Dim() != 3 || d.Name() != "dense:endpoint:ada-test" {
		t.Errorf("Dim %d, Name %s", e.Dim(), d.Name())
	}
	got, err := d.Search("rain tomorrow?", 3)
	if err != nil {
		t.Fatal(err)
	}
	// normalised docs are unit axes: scores are the query's components 0.8, 0.6, 0.
	want := []Candidate{{ID: "w", Index: 0, Score: 0.8}, {ID: "m", Index: 2, Score: 0.6}, {ID: "s", Index: 1, Score: 0}}
	for i := range want {
		if got[i].ID != want[i].ID || math.Abs(got[i].Score-want[i].Score) > 1e-6 {
			t.Fatalf("Search = %v, want %v", got, want)
		}
	}
}

func TestEmbeddingsEndpointErrors(t *testing.T) {
	fake := &fakeEmbeddingsServer{table: map[string][]float64{
		"passage: a": {1, 0}, "passage: b": {0, 0}, "passage: c": {1, 2, 3},
	}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	tests := []struct {
		name   string
		mutate func(*EndpointConfig)
		texts  []string
		want   string
	}{
		{"server error message", nil, []string{"unknown"}, "HTTP 400: no vector for passage: unknown"},
		{"wrong model", func(c *EndpointConfig) { c.Model = "other" }, []string{"a"}, "unknown model"},
		{"zero vector", nil, []string{"b"}, "norm 0"},
		{"dimension change", func(c *EndpointConfig) { c.BatchSize = 1 }, []string{"a", "c"}, "dimension 3, want 2"},
		{"configured dimension", func(c *EndpointConfig) { c.Dim = 4 }, []string{"a"}, "dimension 2, want 4"},
		{"wrong path", func(c *EndpointConfig) { c.BaseURL = srv.URL + "/v2" }, []string{"a"}, "HTTP 404"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEndpoint(t, srv, tc.mutate)
			_, err := e.EncodeDocs(tc.texts)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), srv.URL) {
				t.Errorf("error = %v, want one naming %s and saying %q", err, srv.URL, tc.want)
			}
		})
	}
	t.Run("retries 503", func(t *testing.T) {
		fake.failures.Store(2)
		var waits []time.Duration
		e := newEndpoint(t, srv, func(c *EndpointConfig) {
			c.Retries = 2
			c.Sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
		})
		if _, err := e.EncodeDocs([]string{"a"}); err != nil {
			t.Errorf("after 2 failures and 2 retries: %v", err)
		}
		// Both 503s said Retry-After: 7, longer than the 1 ms backoff.
		if len(waits) != 2 || waits[0] != 7*time.Second || waits[1] != 7*time.Second {
			t.Errorf("waits %v, want the server's 7 s twice", waits)
		}
		fake.failures.Store(2)
		e = newEndpoint(t, srv, func(c *EndpointConfig) {
			c.Retries = 1
			c.Sleep = func(context.Context, time.Duration) error { return nil }
		})
		if _, err := e.EncodeDocs([]string{"a"}); err == nil || !strings.Contains(err.Error(), "HTTP 503: overloaded") {
			t.Errorf("after 2 failures and 1 retry: error %v, want HTTP 503", err)
		}
		fake.failures.Store(0)
	})
	if _, err := NewEmbeddingsEndpoint(EndpointConfig{BaseURL: srv.URL, Model: "m"}); err == nil {
		t.Error("no HTTP client: want an error")
	}
}
