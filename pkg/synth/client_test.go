package synth

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"
	"time"
)

// scripted is an OpenAI-compatible endpoint on 127.0.0.1 whose n-th request gets the n-th
// behaviour of the script (the last one repeats).
type scripted struct {
	mu       sync.Mutex
	script   []func(w http.ResponseWriter, r *http.Request)
	requests []chatRequest
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	_ = json.NewDecoder(r.Body).Decode(&req)
	s.mu.Lock()
	i := len(s.requests)
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	if r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	s.script[min(i, len(s.script)-1)](w, r)
}

func answer(text string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"choices": []map[string]any{{"message": map[string]string{"role": "assistant", "content": text}, "finish_reason": "stop"}},
		})
	}
}

func status(code int) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "boom", code) }
}

func rawBody(body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(body)) }
}

// truncated promises a longer body than it sends, then drops the connection.
func truncated(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Length", "1000")
	_, _ = w.Write([]byte(`{"choices":[{"message":{"content":"1. half`))
	if hj, ok := w.(http.Hijacker); ok {
		c, _, _ := hj.Hijack()
		c.Close()
	}
}

func hang(w http.ResponseWriter, r *http.Request) {
	<-r.Context().Done()
}

func newLoopback(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewUnstartedServer(h)
	s.Listener.Close()
	s.Listener = l
	s.Start()
	t.Cleanup(s.Close)
	return s
}

type sleepLog struct {
	mu     sync.Mutex
	delays []time.Duration
}

func (s *sleepLog) sleep(_ context.Context, d time.Duration) error {
	s.mu.Lock()
	s.delays = append(s.delays, d)
	s.mu.Unlock()
	return nil
}

func testClient(t *testing.T, url string, retries int, timeout time.Duration) (*Client, *sleepLog) {
	t.Helper()
	c, err := NewClient(ClientConfig{BaseURL: url + "/v1", Model: "m", Temperature: 0.5, MaxTokens: 64, Timeout: timeout, Retries: retries, Backoff: 100 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sl := &sleepLog{}
	c.WithSleep(sl.sleep)
	return c, sl
}

func acceptList(text string) error {
	if len(ParseQueries(text)) == 0 {
		return errNoQueries
	}
	return nil
}

func TestClientFaultsAreRetriedThenSucceed(t *testing.T) {
	cases := []struct {
		name   string
		first  func(http.ResponseWriter, *http.Request)
		faults []string
	}{
		{"5xx", status(503), []string{FaultHTTP5xx}},
		{"429", status(429), []string{FaultHTTP5xx}},
		{"non-JSON", rawBody("<html>gateway</html>"), []string{FaultBadJSON}},
		{"truncated body", truncated, []string{FaultBadJSON}},
		{"empty message", answer("   "), []string{FaultEmpty}},
		{"no choices", rawBody(`{"choices": []}`), []string{FaultEmpty}},
		{"format ignored", answer("Sure, happy to help:"), []string{FaultFormat}},
		{"timeout", hang, []string{FaultTimeout}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := &scripted{script: []func(http.ResponseWriter, *http.Request){c.first, answer("1. find cheap flights to rome")}}
			hs := newLoopback(t, srv)
			cl, sl := testClient(t, hs.URL, 3, 300*time.Millisecond)
			got, err := cl.Complete(context.Background(), Request{Messages: []Message{{Role: "user", Content: "x"}}, Seed: 10, Accept: acceptList})
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if got.Attempts != 2 || !reflect.DeepEqual(got.Faults, c.faults) || got.Seed != 11 {
				t.Fatalf("attempts %d faults %v seed %d; want 2, %v, 11", got.Attempts, got.Faults, got.Seed, c.faults)
			}
			if !reflect.DeepEqual(sl.delays, []time.Duration{100 * time.Millisecond}) {
				t.Fatalf("backoff delays %v, want [100ms]", sl.delays)
			}
			if srv.requests[0].Seed != 10 || srv.requests[1].Seed != 11 || srv.requests[0].Model != "m" || srv.requests[0].MaxTokens != 64 {
				t.Fatalf("requests %+v", srv.requests)
			}
		})
	}
}

// TestClientHonoursRetryAfter: a 429 saying Retry-After: 4 is retried after 4 s, not after the
// 100 ms backoff; a 503 asking for an hour is not retried (the attempt's fault is reported).
func TestClientHonoursRetryAfter(t *testing.T) {
	after := func(code int, v string) func(http.ResponseWriter, *http.Request) {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After", v)
			http.Error(w, "slow down", code)
		}
	}
	srv := &scripted{script: []func(http.ResponseWriter, *http.Request){after(429, "4"), answer("1. book a table")}}
	cl, sl := testClient(t, newLoopback(t, srv).URL, 3, time.Second)
	got, err := cl.Complete(context.Background(), Request{Messages: []Message{{Role: "user", Content: "x"}}})
	if err != nil || got.Attempts != 2 || !reflect.DeepEqual(sl.delays, []time.Duration{4 * time.Second}) {
		t.Fatalf("attempts %d, err %v, delays %v; want 2 attempts after one 4 s wait", got.Attempts, err, sl.delays)
	}
	srv = &scripted{script: []func(http.ResponseWriter, *http.Request){after(503, "3600")}}
	cl, sl = testClient(t, newLoopback(t, srv).URL, 3, time.Second)
	_, err = cl.Complete(context.Background(), Request{Messages: []Message{{Role: "user", Content: "x"}}})
	var re *RequestError
	if !errors.As(err, &re) || re.Attempts != 1 || len(sl.delays) != 0 || len(srv.requests) != 1 {
		t.Fatalf("err %v, delays %v, %d requests; want one attempt and no retry", err, sl.delays, len(srv.requests))
	}
}

func TestClientGivesUpAfterBoundedRetries(t *testing.T) {
	srv := &scripted{script: []func(http.ResponseWriter, *http.Request){status(500)}}
	hs := newLoopback(t, srv)
	cl, sl := testClient(t, hs.URL, 3, time.Second)
	_, err := cl.Complete(context.Background(), Request{Messages: []Message{{Role: "user", Content: "x"}}})
	var re *RequestError
	if !errors.As(err, &re) {
		t.Fatalf("error %v is not a RequestError", err)
	}
	if re.Attempts != 4 || len(srv.requests) != 4 || re.FinalFault() != FaultHTTP5xx {
		t.Fatalf("attempts %d, requests %d, fault %s; want 4, 4, http_5xx", re.Attempts, len(srv.requests), re.FinalFault())
	}
	// Exponential backoff: 100, 200, 400 ms.
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}
	if !reflect.DeepEqual(sl.delays, want) {
		t.Fatalf("delays %v, want %v", sl.delays, want)
	}
}

func TestClientDoesNotRetry4xx(t *testing.T) {
	srv := &scripted{script: []func(http.ResponseWriter, *http.Request){status(404)}}
	hs := newLoopback(t, srv)
	cl, _ := testClient(t, hs.URL, 3, time.Second)
	_, err := cl.Complete(context.Background(), Request{Messages: []Message{{Role: "user", Content: "x"}}})
	var re *RequestError
	if !errors.As(err, &re) || re.Attempts != 1 || re.FinalFault() != FaultHTTP4xx {
		t.Fatalf("got %v; want one http_4xx attempt", err)
	}
}

func TestClientConnectionRefused(t *testing.T) {
	// Take a free loopback port and close it, so nothing listens there.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close()
	cl, sl := testClient(t, url, 2, time.Second)
	_, err = cl.Complete(context.Background(), Request{Messages: []Message{{Role: "user", Content: "x"}}})
	var re *RequestError
	if !errors.As(err, &re) || re.Attempts != 3 || !reflect.DeepEqual(re.Faults, []string{FaultConnection, FaultConnection, FaultConnection}) {
		t.Fatalf("got %v; want 3 connection faults", err)
	}
	if len(sl.delays) != 2 {
		t.Fatalf("delays %v, want 2", sl.delays)
	}
}

func TestClientStopsOnCancel(t *testing.T) {
	srv := &scripted{script: []func(http.ResponseWriter, *http.Request){hang}}
	hs := newLoopback(t, srv)
	cl, _ := NewClient(ClientConfig{BaseURL: hs.URL + "/v1", Model: "m", Timeout: 10 * time.Second, Retries: 5, Backoff: time.Millisecond}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	_, err := cl.Complete(ctx, Request{Messages: []Message{{Role: "user", Content: "x"}}})
	var re *RequestError
	if !errors.As(err, &re) || re.FinalFault() != FaultCanceled || re.Attempts != 1 {
		t.Fatalf("got %v; want one canceled attempt", err)
	}
}

func TestClientPrefixAndStop(t *testing.T) {
	srv := &scripted{script: []func(http.ResponseWriter, *http.Request){answer("first\n2. second")}}
	hs := newLoopback(t, srv)
	cl, _ := testClient(t, hs.URL, 0, time.Second)
	got, err := cl.Complete(context.Background(), Request{Messages: []Message{{Role: "user", Content: "x"}}, Prefix: "1. ", Stop: []string{"\n\n"}, MaxTokens: 7})
	if err != nil {
		t.Fatal(err)
	}
	if got.Text != "1. first\n2. second" {
		t.Fatalf("text %q", got.Text)
	}
	if r := srv.requests[0]; !reflect.DeepEqual(r.Stop, []string{"\n\n"}) || r.MaxTokens != 7 {
		t.Fatalf("request %+v", r)
	}
}
