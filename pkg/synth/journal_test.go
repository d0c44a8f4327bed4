package synth

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/retrieve"
)

func TestJournalDropsTornLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"syn/a", "syn/b"} {
		if err := j.Append(Record{Key: k, OK: true, Queries: []string{"q " + k}}); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	good, _ := os.ReadFile(path)
	// A write cut short by kill -9: half a record, no newline.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"key":"syn/c","ok":tr`)
	f.Close()
	j, err = OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if j.Dropped != len(`{"key":"syn/c","ok":tr`) || !j.Done("syn/a") || !j.Done("syn/b") || j.Done("syn/c") {
		t.Fatalf("dropped %d, done a/b/c = %v/%v/%v", j.Dropped, j.Done("syn/a"), j.Done("syn/b"), j.Done("syn/c"))
	}
	if err := j.Append(Record{Key: "syn/c", OK: true}); err != nil {
		t.Fatal(err)
	}
	// Appending a key that is already done writes nothing.
	if err := j.Append(Record{Key: "syn/a", OK: true, Queries: []string{"other"}}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	after, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(after), string(good)) {
		t.Fatalf("earlier records changed:\n%s", after)
	}
	lines, _ := readLines(path)
	if len(lines) != 3 || !strings.Contains(lines[2], `"syn/c"`) {
		t.Fatalf("lines %q", lines)
	}
}

func TestJournalFailedThenRetried(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, _ := OpenJournal(path)
	j.Append(Record{Key: "syn/a", OK: false, Error: "boom", Faults: []string{"http_5xx"}})
	if j.Done("syn/a") {
		t.Fatal("failed record counts as done")
	}
	j.Append(Record{Key: "syn/a", OK: true, Raw: "1. x"})
	j.Close()
	j, _ = OpenJournal(path)
	defer j.Close()
	recs := j.Records()
	if len(recs) != 1 || !recs[0].OK || recs[0].Raw != "1. x" {
		t.Fatalf("records %+v; want the retried success only", recs)
	}
}

func TestJournalRejectsCorruptMiddle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	os.WriteFile(path, []byte("{\"key\":\"syn/a\",\"ok\":true}\nnot json\n{\"key\":\"syn/b\",\"ok\":true}\n"), 0o644)
	if _, err := OpenJournal(path); err == nil || !strings.Contains(err.Error(), ":2:") {
		t.Fatalf("got %v; want an error naming line 2", err)
	}
}

// syntheticTools returns n distinct tools whose names the fake server echoes into its queries.
func syntheticTools(n int) []catalog.Tool {
	var out []catalog.Tool
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("tool%03d", i)
		// The description holds the next tool's word, so BM25's best non-positive tool for a
		// query of tool i (which holds word i) is tool i-1: a hand-checkable hard negative.
		out = append(out, catalog.Tool{ID: "test/pkg/" + name, Name: name, Platform: "test",
			Description: fmt.Sprintf("does the %s job for the user", wordFor(i+1))})
	}
	return out
}

var toolNameRE = regexp.MustCompile(`Tool: (tool\d{3})\n`)

// fakeLLM answers generation prompts with three queries naming the tool of the prompt, after a
// delay, and counts the requests per tool.
type fakeLLM struct {
	delay time.Duration
	mu    sync.Mutex
	count map[string]int
}

func (f *fakeLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
		http.Error(w, "bad request", 400)
		return
	}
	ms := toolNameRE.FindAllStringSubmatch(req.Messages[0].Content, -1)
	name := ms[len(ms)-1][1] // the last "Tool:" is the one asked about
	f.mu.Lock()
	f.count[name]++
	f.mu.Unlock()
	select {
	case <-time.After(f.delay):
	case <-r.Context().Done():
		return
	}
	answer(queriesFor(name))(w, r)
}

func wordFor(i int) string {
	words := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"}
	return words[i%len(words)] + fmt.Sprint(i)
}

// queriesFor writes three queries for a tool that share no near-duplicate with those of another
// tool (a word of their own per tool) and share the word "thing" with every tool description, so
// BM25 finds hard negatives.
func queriesFor(name string) string {
	var i int
	fmt.Sscanf(name, "tool%d", &i)
	g := wordFor(i)
	return fmt.Sprintf("please run %s on my %s thing today\n2. can %s help me with the %s thing now\n3. I want %s to process the %s thing for me", name, g, name, g, name, g)
}

// TestKillHelperProcess is the child of TestKillNineAndResume: it runs a Syn generation against
// the fake server and journal named in its environment. It does nothing in a normal test run.
func TestKillHelperProcess(t *testing.T) {
	if os.Getenv("SYNTH_KILL_HELPER") != "1" {
		t.Skip("helper process for TestKillNineAndResume")
	}
	cl, err := NewClient(ClientConfig{BaseURL: os.Getenv("SYNTH_URL"), Model: "fake", Timeout: 10 * time.Second, Retries: 2, Backoff: 10 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	j, err := OpenJournal(os.Getenv("SYNTH_JOURNAL"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultSynConfig()
	cfg.QueriesPerTool, cfg.Concurrency = 3, 3
	if err := GenerateSyn(context.Background(), cl, syntheticTools(40), cfg, j, nil, time.Now); err != nil {
		t.Fatal(err)
	}
	j.Close()
}

// TestKillNineAndResume kills a real generation run with SIGKILL while requests are in flight,
// adds a torn half-line as a kill during a write would leave, reruns it to completion, and checks
// that the journal has exactly one valid record per tool, that the records written before the
// kill are untouched, and that only requests in flight at the kill were repeated.
func TestKillNineAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	fake := &fakeLLM{delay: 40 * time.Millisecond, count: map[string]int{}}
	hs := newLoopback(t, fake)
	journal := filepath.Join(t.TempDir(), "syn.jsonl")
	child := func() *exec.Cmd {
		c := exec.Command(os.Args[0], "-test.run=^TestKillHelperProcess$", "-test.count=1")
		c.Env = append(os.Environ(), "SYNTH_KILL_HELPER=1", "SYNTH_URL="+hs.URL+"/v1", "SYNTH_JOURNAL="+journal)
		return c
	}
	first := child()
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		lines, _ := readLines(journal)
		if len(lines) >= 10 {
			break
		}
		if time.Now().After(deadline) {
			first.Process.Kill()
			t.Fatalf("child wrote only %d records in 60 s", len(lines))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := first.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = first.Wait()
	before, _ := os.ReadFile(journal)
	nBefore := strings.Count(string(before), "\n")
	if nBefore >= 40 {
		t.Fatalf("the child finished (%d records) before it was killed; the test proved nothing", nBefore)
	}
	f, _ := os.OpenFile(journal, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"key":"syn/n3/test/pkg/tool0`)
	f.Close()

	second := child()
	if out, err := second.CombinedOutput(); err != nil {
		t.Fatalf("rerun: %v\n%s", err, out)
	}
	after, _ := os.ReadFile(journal)
	// Complete records written before the kill are kept byte for byte (only the torn tail goes).
	if !strings.HasPrefix(string(after), string(before[:strings.LastIndexByte(string(before), '\n')+1])) {
		t.Fatal("records written before the kill were changed")
	}
	lines, _ := readLines(journal)
	if len(lines) != 40 {
		t.Fatalf("%d journal lines after resume, want 40 (one per tool)", len(lines))
	}
	seen := map[string]bool{}
	for i, l := range lines {
		var r Record
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("line %d is not a record: %v", i+1, err)
		}
		if seen[r.Key] {
			t.Fatalf("duplicate record for %s", r.Key)
		}
		seen[r.Key] = true
		name := strings.TrimPrefix(r.Key, "syn/n3/test/pkg/")
		if !r.OK || len(r.Queries) != 3 || !strings.Contains(r.Queries[0], name) {
			t.Fatalf("record %d (%s) is wrong: %+v", i+1, r.Key, r)
		}
	}
	repeated := 0
	for name, n := range fake.count {
		if n > 1 {
			repeated++
		}
		if n > 2 {
			t.Errorf("%s requested %d times", name, n)
		}
	}
	// Only the requests in flight at the kill (at most the concurrency, 3) are sent again.
	if repeated > 3 || len(fake.count) != 40 {
		t.Fatalf("%d tools requested twice (want ≤ 3), %d tools requested (want 40)", repeated, len(fake.count))
	}
}

// TestRunCompletesWithFailures checks that tools whose requests fail for good are journaled as
// failures, that the other tools still complete, and that AssembleSyn reports them.
func TestRunCompletesWithFailures(t *testing.T) {
	tools := syntheticTools(4)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req chatRequest
		json.NewDecoder(r.Body).Decode(&req)
		ms := toolNameRE.FindAllStringSubmatch(req.Messages[0].Content, -1)
		switch ms[len(ms)-1][1] {
		case "tool001":
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
		case "tool002":
			answer("Sorry, I cannot help with that:")(w, r)
		default:
			answer(queriesFor(ms[len(ms)-1][1]))(w, r)
		}
	})
	hs := newLoopback(t, h)
	cl, _ := NewClient(ClientConfig{BaseURL: hs.URL + "/v1", Model: "fake", Timeout: 5 * time.Second, Retries: 2, Backoff: time.Millisecond}, nil)
	j, _ := OpenJournal(filepath.Join(t.TempDir(), "syn.jsonl"))
	defer j.Close()
	cfg := DefaultSynConfig()
	cfg.QueriesPerTool = 3
	if err := GenerateSyn(context.Background(), cl, tools, cfg, j, nil, time.Now); err != nil {
		t.Fatal(err)
	}
	res, err := AssembleSyn(tools, j, retrieve.NewBM25(bench.DocsFromTools(tools), retrieve.DefaultBM25Params()), cfg)
	if err != nil {
		t.Fatal(err)
	}
	st := res.Stats
	if st.ToolsOK != 2 || st.ToolsFailed != 2 || len(st.Failures) != 2 {
		t.Fatalf("ok %d failed %d failures %+v", st.ToolsOK, st.ToolsFailed, st.Failures)
	}
	want := map[string][]string{
		"syn/n3/test/pkg/tool001": {FaultHTTP5xx, FaultHTTP5xx, FaultHTTP5xx},
		"syn/n3/test/pkg/tool002": {FaultFormat, FaultFormat, FaultFormat},
	}
	for _, f := range st.Failures {
		if fmt.Sprint(f.Faults) != fmt.Sprint(want[f.Key]) {
			t.Errorf("%s faults %v, want %v", f.Key, f.Faults, want[f.Key])
		}
	}
	// Two tools × 3 queries, each naming its tool (so no near-duplicates across tools).
	// tool000's queries hold "alpha0", which no other description holds (tool003's holds "echo4"),
	// so BM25 scores no other tool above zero and they get no hard negative; tool003's queries
	// hold "delta3", which is in tool002's description: their hard negative is tool002. Every
	// query gets one random negative. So 3 hard + 6 random = 9 negatives.
	if st.Queries != 6 || st.PositivePairs != 6 || st.NegativePairs != 9 || st.HardNegativePairs != 3 {
		t.Fatalf("queries %d positives %d negatives %d (hard %d); want 6, 6, 9 (3)", st.Queries, st.PositivePairs, st.NegativePairs, st.HardNegativePairs)
	}
	for _, n := range res.Negatives {
		var hard []string
		for _, x := range n.Negatives {
			if x.Kind == "hard" {
				hard = append(hard, x.ToolID)
			}
		}
		if n.Positive == "test/pkg/tool003" && fmt.Sprint(hard) != "[test/pkg/tool002]" {
			t.Errorf("hard negatives of %s: %v, want [test/pkg/tool002]", n.QueryID, hard)
		}
	}
}

// TestUnwritableJournalStopsTheRun: an Append that failed (disk full, a removed file) was
// remembered but the workers went on asking the model for every remaining item, whose answers
// were all lost; now the run stops at once and names the journal.
func TestUnwritableJournalStopsTheRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "syn.jsonl")
	j, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	j.f.Close() // every Append now fails to write
	cfg := DefaultSynConfig()
	cfg.QueriesPerTool, cfg.Concurrency = 3, 2
	gen := &countingGen{}
	err = GenerateSyn(context.Background(), gen, syntheticTools(40), cfg, j, nil, time.Now)
	if err == nil || !strings.Contains(err.Error(), "syn: generate: journal "+path) {
		t.Fatalf("error %v, want it to name the journal %s", err, path)
	}
	// The two workers' first answers fail to append; at most one more item each was taken
	// before the cancellation reached the feed.
	if n := gen.n.Load(); n > 4 {
		t.Errorf("%d of 40 items asked after the journal failed", n)
	}
}
