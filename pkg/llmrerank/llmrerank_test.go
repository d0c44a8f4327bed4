package llmrerank

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/retrieve"
	"github.com/rated-dev/rated/pkg/synth"
)

// fakeLLM answers listwise prompts with the tools whose title contains the request's first word
// first (in reverse identifier order), then nothing else, so the rest must follow in first-stage
// order. Its first answer is garbage when garbageFirst is set.
type fakeLLM struct {
	requests     atomic.Int64
	garbageFirst bool
}

var promptLine = regexp.MustCompile(`(?m)^\[(\d+)\] (.*)$`)

func (f *fakeLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := f.requests.Add(1)
	var req struct {
		Messages []synth.Message `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) != 1 {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	prompt := req.Messages[0].Content
	_, rest, _ := strings.Cut(prompt, "\nRequest: ")
	word := strings.Fields(rest)[0]
	var ids []string
	for _, m := range promptLine.FindAllStringSubmatch(prompt, -1) {
		if strings.Contains(m[2], word) {
			ids = append([]string{"[" + m[1] + "]"}, ids...)
		}
	}
	answer := strings.Join(ids, " > ")
	if f.garbageFirst && n == 1 {
		answer = "I cannot rank these."
	}
	json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]string{"role": "assistant", "content": answer}, "finish_reason": "stop"}}})
}

func newFake(t *testing.T, f *fakeLLM) synth.Generator {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(f)
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	c, err := synth.NewClient(synth.ClientConfig{BaseURL: srv.URL + "/v1", Model: "fake", Timeout: 5 * time.Second, Retries: 2, Backoff: time.Millisecond}, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// firstStage ranks the corpus in corpus order for every query.
type firstStage struct{ docs []bench.Doc }

func (f firstStage) Name() string { return "first" }
func (f firstStage) Search(_ string, k int) ([]retrieve.Candidate, error) {
	var out []retrieve.Candidate
	for i, d := range f.docs[:min(k, len(f.docs))] {
		out = append(out, retrieve.Candidate{ID: d.ID, Index: i, Score: float64(len(f.docs) - i)})
	}
	return out, nil
}

func corpus() []bench.Doc {
	return []bench.Doc{
		{ID: "t0", Title: "calendar", Text: "create an event"},
		{ID: "t1", Title: "slack", Text: "post a message"},
		{ID: "t2", Title: "mail", Text: "send an email"},
		{ID: "t3", Title: "slack-dm", Text: "direct message on slack"},
		{ID: "t4", Title: "sms", Text: "send a text"},
	}
}

func TestRerankerOrdersByTheAnswerAndKeepsAJournal(t *testing.T) {
	fake := &fakeLLM{garbageFirst: true}
	gen := newFake(t, fake)
	path := filepath.Join(t.TempDir(), "rerank.jsonl")
	j, err := synth.OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	docs := corpus()
	cfg := DefaultConfig()
	cfg.Depth = 4 // t4 is below the reranked head
	r, err := New(context.Background(), firstStage{docs}, docs, gen, j, cfg)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.SearchBatch([]string{"slack please", "mail it"}, 10)
	if err != nil {
		t.Fatal(err)
	}
	// "slack": tools 2 (slack) and 4 (slack-dm) mention it; the fake answers [4] > [2]; the rest
	// (t0, t2) follow in first-stage order; t4 was never in the head.
	ids := func(cs []retrieve.Candidate) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	if want := []string{"t3", "t1", "t0", "t2"}; !reflect.DeepEqual(ids(got[0]), want) {
		t.Errorf("slack: %v, want %v", ids(got[0]), want)
	}
	if want := []string{"t2", "t0", "t1", "t3"}; !reflect.DeepEqual(ids(got[1]), want) {
		t.Errorf("mail: %v, want %v", ids(got[1]), want)
	}
	for p, c := range got[0] {
		if c.Score != 1/float64(p+1) {
			t.Errorf("position %d score %v, want 1/%d", p, c.Score, p+1)
		}
	}
	// Two queries, the first answer rejected (no identifier) and asked again: three requests.
	if n := fake.requests.Load(); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
	lat, fresh := r.Latencies()
	if len(lat) != 2 || fresh != 2 {
		t.Errorf("latencies %v, fresh %d; want 2 and 2", lat, fresh)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	// A second run over the same journal asks nothing and gives the same lists.
	j2, err := synth.OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	r2, _ := New(context.Background(), firstStage{docs}, docs, gen, j2, cfg)
	again, err := r2.SearchBatch([]string{"slack please", "mail it"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if n := fake.requests.Load(); n != 3 {
		t.Errorf("the rerun sent %d more requests", n-3)
	}
	if !reflect.DeepEqual(ids(again[0]), []string{"t3", "t1"}) || len(again[1]) != 2 {
		t.Errorf("rerun with k=2: %v", again)
	}
	if _, fresh := r2.Latencies(); fresh != 0 {
		t.Errorf("rerun: %d fresh answers", fresh)
	}
	if !strings.Contains(r.Name(), "fake") || !strings.Contains(r.Name(), "top 4") {
		t.Errorf("name %q", r.Name())
	}
}

func TestRerankerFailsWhenTheModelNeverAnswersInFormat(t *testing.T) {
	gen := newFake(t, &fakeLLM{})
	j, _ := synth.OpenJournal(filepath.Join(t.TempDir(), "j.jsonl"))
	defer j.Close()
	docs := corpus()
	r, _ := New(context.Background(), firstStage{docs}, docs, gen, j, DefaultConfig())
	// No tool mentions "zzz": the fake's answer is empty every time; the client retries twice.
	if _, err := r.Search("zzz", 5); err == nil || !strings.Contains(err.Error(), "failed after 3 attempt(s)") {
		t.Errorf("err = %v, want a failure after the retries", err)
	}
	// "created" is only in t0's text: one identifier, then tool text that is no identifier.
	fake := &fakeLLM{}
	r2, _ := New(context.Background(), firstStage{docs}, docs, newFake(t, fake), j, DefaultConfig())
	got, err := r2.Search("create", 5)
	if err != nil || len(got) != 5 || got[0].ID != "t0" || got[1].ID != "t1" {
		t.Errorf("create: %+v, %v", got, err)
	}
	if _, err := New(context.Background(), firstStage{docs}, docs, gen, j, Config{Depth: 1}); err == nil {
		t.Error("depth 1 accepted")
	}
}

// Check refuses each field that cannot work with a *ConfigError naming it; a zero Concurrency
// is refused, not taken as 1.
func TestConfigCheck(t *testing.T) {
	ok := DefaultConfig()
	if err := ok.Check(); err != nil {
		t.Fatalf("default: %v", err)
	}
	for _, c := range []struct {
		edit  func(*Config)
		field string
		msg   string
	}{
		{func(c *Config) { c.Depth = 1 }, "Depth", "llm rerank: Depth 1: need at least 2 candidates to rerank"},
		{func(c *Config) { c.Concurrency = 0 }, "Concurrency", "llm rerank: Concurrency 0: need at least 1 request in flight"},
		{func(c *Config) { c.MaxTokens = -1 }, "MaxTokens", "llm rerank: MaxTokens -1: must be >= 0 (0: the client's limit)"},
		{func(c *Config) { c.MaxDocChars = -5 }, "MaxDocChars", "llm rerank: MaxDocChars -5: must be >= 0 (0: no limit)"},
	} {
		cfg := DefaultConfig()
		c.edit(&cfg)
		err := cfg.Check()
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != c.field || err.Error() != c.msg {
			t.Errorf("%s: %v, want %q", c.field, err, c.msg)
		}
		if _, err := New(context.Background(), nil, nil, nil, nil, cfg); err == nil || err.Error() != c.msg {
			t.Errorf("New with bad %s: %v", c.field, err)
		}
	}
}

func TestParseRanking(t *testing.T) {
	for in, want := range map[string][]int{
		"[2] > [5] > [1]":                  {1, 4, 0},
		"The ranking: [ 3 ]>[3]>[9]>[1]":   {2, 0},
		"[0] [6] [4]":                      {3},
		"2 > 5 > 1":                        nil,
		"[1][2][3][4][5][6]":               {0, 1, 2, 3, 4},
		"[00002] > [99999999999999999999]": {},
	} {
		got := ParseRanking(in, 5)
		if len(got) == 0 && len(want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("ParseRanking(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestPrompt(t *testing.T) {
	p := Prompt("  find\tflights ", []bench.Doc{{Title: "a", Text: strings.Repeat("x", 10)}, {Text: "b\nc"}}, 5)
	for _, s := range []string{"I will give you 2 tools", "[1] a: xx…", "[2] b c\n", "Request: find flights\n", "Rank all 2 tools"} {
		if !strings.Contains(p, s) {
			t.Errorf("prompt lacks %q:\n%s", s, p)
		}
	}
}

// FuzzParseRanking: any answer gives distinct positions in [0, n).
func FuzzParseRanking(f *testing.F) {
	for _, s := range []string{"[2] > [5] > [1]", "[ 3 ]>[3]", "", "[", "[99999]", "[1]]]][[[2]", "\xff[1]"} {
		f.Add(s, 5)
	}
	f.Fuzz(func(t *testing.T, answer string, n int) {
		seen := map[int]bool{}
		for _, i := range ParseRanking(answer, n) {
			if i < 0 || i >= n || seen[i] {
				t.Fatalf("ParseRanking(%q, %d) gave %d", answer, n, i)
			}
			seen[i] = true
		}
	})
}
