package synth

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rated-dev/rated/pkg/catalog"
)

func TestReadRealQueries(t *testing.T) {
	p := filepath.Join(t.TempDir(), "q.jsonl")
	os.WriteFile(p, []byte(`{"query_id": 588, "group": "G1_instruction", "query": "Tell me about Messi"}

{"query_id": "7", "group": "G2_category", "query": "Find a hotel"}
`), 0o644)
	qs, err := ReadRealQueries(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []RealQuery{{"G1_instruction-588", "G1_instruction", "Tell me about Messi"}, {"G2_category-7", "G2_category", "Find a hotel"}}
	if !reflect.DeepEqual(qs, want) {
		t.Fatalf("got %+v", qs)
	}
	os.WriteFile(p, []byte("{\"query_id\": 1, \"group\": \"g\", \"query\": \"a\"}\n{\"query_id\": 1, \"group\": \"g\", \"query\": \"b\"}\n"), 0o644)
	if _, err := ReadRealQueries(p); err == nil || !strings.Contains(err.Error(), ":2:") {
		t.Fatalf("duplicate id: got %v, want an error on line 2", err)
	}
}

// TestAssembleRealHandChecked runs the Real filters on a journal written by hand.
func TestAssembleRealHandChecked(t *testing.T) {
	tools := []catalog.Tool{{ID: "a", Name: "a", Platform: "p"}, {ID: "b", Name: "b", Platform: "p"}, {ID: "c", Name: "c", Platform: "p"}}
	q1 := RealQuery{ID: "g-1", Group: "g", Text: "find the weather in paris for tomorrow"}
	q2 := RealQuery{ID: "g-2", Group: "g", Text: "find the weather in paris for tomorrow please"} // near-duplicate of q1 (7/8)
	q3 := RealQuery{ID: "g-3", Group: "g", Text: "send an email to my boss about the report"}
	q4 := RealQuery{ID: "g-4", Group: "g", Text: "translate this menu into english"}
	pairs := []RealPair{
		{q1, "a", 5.0}, {q1, "b", 1.0}, // b below the retrieval threshold 2
		{q2, "a", 4.0},
		{q3, "b", 3.0}, {q3, "c", 2.0}, // c: validation failed
		{q4, "c", 6.0}, // validator says 0.5: dropped
	}
	j, _ := OpenJournal(filepath.Join(t.TempDir(), "real.jsonl"))
	defer j.Close()
	j.Append(Record{Key: "real/g-1/a", OK: true, Score: 0.9})
	j.Append(Record{Key: "real/g-2/a", OK: true, Score: 1})
	j.Append(Record{Key: "real/g-3/b", OK: true, Score: 0.85})
	j.Append(Record{Key: "real/g-3/c", OK: false, Faults: []string{FaultTimeout, FaultTimeout}, Error: "timeout"})
	j.Append(Record{Key: "real/g-4/c", OK: true, Score: 0.5})
	cfg := DefaultRealConfig()
	cfg.MinRetrievalScore = 2
	res, err := AssembleReal(tools, []RealQuery{q1, q2, q3, q4}, pairs, j, "BM25", cfg)
	if err != nil {
		t.Fatal(err)
	}
	st := res.Stats
	got := []int{st.CandidatePairs, st.DroppedLowScore, st.ValidatedPairs, st.ValidationFailed, st.DroppedByValidator, st.KeptPairsRaw, st.DroppedNearDup, st.Queries, st.VerifiedPairs}
	want := []int{6, 1, 4, 1, 1, 3, 1, 2, 2}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("counts %v, want %v", got, want)
	}
	if st.Faults[FaultTimeout] != 2 {
		t.Fatalf("faults %v", st.Faults)
	}
	// Retrieval scores 5,1,4,3,2,6: median 3.5; validator scores 0.9,1,0.85,0.5: mean 0.8125.
	if st.RetrievalScores.Quant["p50"] != 3.5 || st.ValidatorScores.Mean != 0.8125 {
		t.Fatalf("distributions %+v / %+v", st.RetrievalScores, st.ValidatorScores)
	}
	if st.QueriesPerSplit["dev"]+st.QueriesPerSplit["test"] != 2 {
		t.Fatalf("splits %v", st.QueriesPerSplit)
	}
	rel := map[string]map[string]int{}
	for _, q := range res.Bench.Splits {
		for id, r := range q {
			rel[id] = r
		}
	}
	if !reflect.DeepEqual(rel, map[string]map[string]int{"g-1": {"a": 1}, "g-3": {"b": 1}}) {
		t.Fatalf("qrels %v", rel)
	}
}

func TestSampleAuditStratified(t *testing.T) {
	var recs []Record
	add := func(n int, score float64, tag string) {
		for i := 0; i < n; i++ {
			recs = append(recs, Record{Key: "real/" + tag + string(rune('a'+i)), OK: true, Score: score})
		}
	}
	add(10, 0.1, "low")  // stratum [0, 0.25)
	add(1, 0.3, "mid")   // stratum [0.25, 0.5): only one pair
	add(10, 0.7, "hi")   // stratum [0.5, 0.85)
	add(10, 0.95, "top") // stratum [0.85, 1]
	recs = append(recs, Record{Key: "real/failed", OK: false}, Record{Key: "syn/x", OK: true, Score: 0.9})
	// The same 31 pairs under a settings-tagged key (the layout build-bench writes now) are the
	// same pairs: the sample must not count them twice.
	for _, r := range recs[:31] {
		r.Key = "real@tag1" + strings.TrimPrefix(r.Key, "real")
		recs = append(recs, r)
	}
	s := SampleAudit(recs, 10, rand.New(rand.NewPCG(1, 1)))
	count := map[float64]int{}
	for _, r := range s {
		count[r.Score]++
	}
	// 10 over 4 strata: 2 each first (the 1-pair stratum gives 1), then the 3 left go 1 each to
	// the three strata still open: low 3, mid 1, hi 3, top 3.
	if len(s) != 10 || count[0.1] != 3 || count[0.3] != 1 || count[0.7] != 3 || count[0.95] != 3 {
		t.Fatalf("sample %v", count)
	}
	// Tagged keys alone (a journal written by the current build) are sampled too.
	if got := len(SampleAudit(recs[33:], 40, rand.New(rand.NewPCG(1, 1)))); got != 31 {
		t.Fatalf("%d pairs sampled from 31 tagged ones", got)
	}
}

func TestAuditAgreement(t *testing.T) {
	p := filepath.Join(t.TempDir(), "audit.csv")
	tools := []catalog.Tool{{ID: "a", Name: "alpha", Description: "does, \"quoted\" things", Platform: "p"}}
	sample := []Record{
		{Key: "real/q1/a", QueryID: "q1", Query: "x", ToolID: "a", Score: 0.9},
		{Key: "real/q2/a", QueryID: "q2", Query: "y", ToolID: "a", Score: 0.2},
		{Key: "real/q3/a", QueryID: "q3", Query: "z", ToolID: "a", Score: 0.86},
		{Key: "real/q4/a", QueryID: "q4", Query: "w", ToolID: "a", Score: 0.5},
		{Key: "real/q5/a", QueryID: "q5", Query: "v", ToolID: "a", Score: 0.1},
	}
	if err := WriteAuditCSV(p, sample, tools, 0.85); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 6 || !strings.HasSuffix(lines[1], ",0.9,1,") || !strings.Contains(lines[1], `"does, ""quoted"" things"`) {
		t.Fatalf("csv:\n%s", data)
	}
	// A person labels: q1 yes (agree), q2 no (agree), q3 no (disagree), q4 yes (disagree), q5 blank.
	labels := []string{"1", "no", "0", "yes", ""}
	for i := range labels {
		lines[i+1] += labels[i]
	}
	os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	a, err := ReadAuditAgreement(p)
	if err != nil {
		t.Fatal(err)
	}
	// Validator keep: 1,0,1,0; human: 1,0,0,1. Agreement 2/4. p_keep = 0.5, p_yes = 0.5, p_e = 0.5,
	// kappa = (0.5-0.5)/(1-0.5) = 0.
	if a.Labelled != 4 || a.Unlabelled != 1 || a.Agree != 2 || a.Rate != 0.5 || a.KeepYes != 1 || a.KeepNo != 1 || a.DropYes != 1 || a.DropNo != 1 || a.Kappa == nil || *a.Kappa != 0 {
		t.Fatalf("agreement %+v", a)
	}
	lines[2] = strings.TrimSuffix(lines[2], "no") + "maybe"
	os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	if _, err := ReadAuditAgreement(p); err == nil || !strings.Contains(err.Error(), ":3:") {
		t.Fatalf("bad label: got %v, want an error on line 3", err)
	}
}

func TestLoadLLMConfigOverrides(t *testing.T) {
	p := filepath.Join(t.TempDir(), "llm.yaml")
	os.WriteFile(p, []byte("host: 127.0.0.1\nport: 18434\nmodel: m\ntemperature: 0.8\nbase_url: \"\"\ntimeout_s: 30\nretries: 3\nbackoff_ms: 500\n"), 0o644)
	env := map[string]string{"RATED_LLM_PORT": "19000", "RATED_LLM_MODEL": "gemma3-1b"}
	c, err := LoadLLMConfig(p, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if c.Port != 19000 || c.Model != "gemma3-1b" || c.Temperature != 0.8 || c.ResolvedBaseURL() != "http://127.0.0.1:19000/v1" {
		t.Fatalf("config %+v", c)
	}
	cc := c.ClientConfig()
	if cc.Timeout.Seconds() != 30 || cc.Retries != 3 || cc.Backoff.Milliseconds() != 500 {
		t.Fatalf("client config %+v", cc)
	}
	env["RATED_LLM_PORT"] = "not-a-port"
	if _, err := LoadLLMConfig(p, func(k string) string { return env[k] }); err == nil {
		t.Fatal("bad override accepted")
	}
	os.WriteFile(p, []byte("prot: 1\n"), 0o644)
	if _, err := LoadLLMConfig(p, func(string) string { return "" }); err == nil {
		t.Fatal("unknown key accepted")
	}
}

// TestRepoLLMConfig checks that the committed configs/llm.yaml decodes and binds to loopback.
func TestRepoLLMConfig(t *testing.T) {
	c, err := LoadLLMConfig(filepath.Join("..", "..", "configs", "llm.yaml"), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if c.Host != "127.0.0.1" || c.Port == 11434 || c.Port == 0 || len(c.GGUFSHA256) != 64 {
		t.Fatalf("config %+v", c)
	}
}
