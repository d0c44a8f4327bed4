package train

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/encode"
)

// smallBench is a hand-written benchmark: ten tools, a train query per tool and four dev queries.
func smallBench() *bench.Bench {
	tools := [][3]string{
		{"slack", "Slack", "post messages to channels"},
		{"gmail", "Gmail", "send and read email"},
		{"weather", "OpenWeather", "current weather by city"},
		{"maps", "Maps", "directions between places"},
		{"github", "GitHub", "open and comment on issues"},
		{"jira", "Jira", "track project tasks"},
		{"fx", "Currency", "convert between currencies"},
		{"stocks", "Stocks", "share prices and quotes"},
		{"calendar", "Calendar", "schedule meetings"},
		{"translate", "Translate", "translate text between languages"},
	}
	train := []string{"tell the team on slack", "email my boss", "will it rain tomorrow", "route to the airport",
		"file a bug report", "add a ticket to the sprint", "how many yen is ten euros", "apple share price",
		"book a meeting on friday", "say hello in french"}
	dev := map[string]string{"message the channel": "slack", "forecast for berlin": "weather",
		"open an issue in the repo": "github", "set up a call next week": "calendar"}
	b := &bench.Bench{Splits: map[string]bench.Qrels{"train": {}, "dev": {}}}
	for i, tl := range tools {
		b.Corpus = append(b.Corpus, bench.Doc{ID: tl[0], Title: tl[1], Text: tl[2]})
		id := "t" + tl[0]
		b.Queries = append(b.Queries, bench.Query{ID: id, Text: train[i]})
		b.Splits["train"][id] = map[string]int{tl[0]: 1}
	}
	// Distractors: tools no query asks for, used as the hard negatives of negatives.jsonl.
	for i, d := range []string{"Pizza: order food delivery", "Fitness: log workouts", "Recipes: cooking ideas",
		"Music: play songs", "Photos: edit pictures", "Taxi: book a ride", "Dictionary: word definitions",
		"Lottery: check numbers", "Pets: vet appointments", "Garden: plant care tips"} {
		title, text, _ := strings.Cut(d, ": ")
		b.Corpus = append(b.Corpus, bench.Doc{ID: fmt.Sprintf("x%d", i), Title: title, Text: text})
	}
	for _, q := range []string{"message the channel", "forecast for berlin", "open an issue in the repo", "set up a call next week"} {
		id := "d" + dev[q]
		b.Queries = append(b.Queries, bench.Query{ID: id, Text: q})
		b.Splits["dev"][id] = map[string]int{dev[q]: 1}
	}
	return b
}

// runConfig trains on smallBench with negatives.jsonl giving train query i the distractor x<i>,
// so no batch has a false negative and each epoch is two batches of four (two pairs dropped).
func runConfig(t *testing.T, out string) Config {
	rt, ert := testRuntime(t)
	negs := filepath.Join(t.TempDir(), "negatives.jsonl")
	var lines []string
	for i, q := range smallBench().SplitQueries("train") {
		pos := strings.TrimPrefix(q.ID, "t")
		lines = append(lines, fmt.Sprintf(`{"query_id":%q,"positive":%q,"negatives":[{"tool_id":"x%d","kind":"hard"}]}`, q.ID, pos, i))
	}
	if err := os.WriteFile(negs, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return Config{Runtime: rt, EncodeRuntime: ert, Artifacts: testArtifacts(t, "all-minilm-l6-v2-test"), ModelDir: minilm(t),
		OutDir: out, Bench: smallBench(), BenchDir: "smallBench", NegativesPath: negs, LR: 3e-5, Warmup: 2, Epochs: 3, Seed: 7,
		ValEvery: 3, CheckpointEvery: 2, Threads: 1, Resume: true}
}

func TestLoadExamplesNegatives(t *testing.T) {
	b := smallBench()
	dir := t.TempDir()
	negs := filepath.Join(dir, "negatives.jsonl")
	// One record with a random then a hard negative: the hard one must come first.
	line := `{"query_id":"tslack","positive":"slack","negatives":[{"tool_id":"maps","kind":"random"},{"tool_id":"gmail","kind":"hard","rank":1}]}` + "\n"
	if err := os.WriteFile(negs, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	ex, src, err := LoadExamples(b, "train", negs, nil, 2, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if len(ex) != 10 {
		t.Fatalf("%d examples, want 10", len(ex))
	}
	if got := strings.Join(ex[0].NegativeIDs, ","); ex[0].QueryID != "tslack" || got != "gmail,maps" {
		t.Errorf("first example %s negatives %s, want tslack gmail,maps", ex[0].QueryID, got)
	}
	if src.File != 2 || src.BM25+src.Random != 18 {
		t.Errorf("negative sources %+v, want 2 from the file and 18 mined", src)
	}
	for _, e := range ex {
		for _, n := range e.NegativeIDs {
			if n == e.PositiveID {
				t.Errorf("query %s has its positive %s as a negative", e.QueryID, n)
			}
		}
		if e.Positive == "" || len(e.Negatives) != 2 {
			t.Errorf("query %s: positive %q, %d negatives", e.QueryID, e.Positive, len(e.Negatives))
		}
	}
	if _, _, err := LoadExamples(b, "test", "", nil, 1, rand.New(rand.NewPCG(1, 2))); err == nil {
		t.Error("a missing split must be an error")
	}
}

// TestLoadExamplesNegativeKinds: the kinds chosen from negatives.jsonl and their order, by hand.
// The record lists random, hard, random, hard; BM25 fills what the kinds leave short.
func TestLoadExamplesNegativeKinds(t *testing.T) {
	b := smallBench()
	negs := filepath.Join(t.TempDir(), "negatives.jsonl")
	line := `{"query_id":"tslack","positive":"slack","negatives":[{"tool_id":"maps","kind":"random"},{"tool_id":"gmail","kind":"hard"},` +
		`{"tool_id":"fx","kind":"random"},{"tool_id":"jira","kind":"hard"}]}` + "\n"
	if err := os.WriteFile(negs, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		kinds    []string
		n        int
		want     string // the first negatives, in order
		fromFile int
	}{
		{nil, 4, "gmail,jira,maps,fx", 4},
		{[]string{NegativeHard, NegativeRandom}, 4, "gmail,jira,maps,fx", 4},
		{[]string{NegativeRandom, NegativeHard}, 4, "maps,fx,gmail,jira", 4},
		{[]string{NegativeRandom}, 2, "maps,fx", 2},
		{[]string{NegativeHard}, 1, "gmail", 1},
		{[]string{NegativeRandom}, 3, "maps,fx", 2}, // the third is BM25's
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.kinds, c.n), func(t *testing.T) {
			ex, src, err := LoadExamples(b, "train", negs, c.kinds, c.n, rand.New(rand.NewPCG(1, 2)))
			if err != nil {
				t.Fatal(err)
			}
			got := ex[0].NegativeIDs
			if ex[0].QueryID != "tslack" || len(got) != c.n || strings.Join(got[:len(strings.Split(c.want, ","))], ",") != c.want {
				t.Errorf("negatives %v, want %s first (%d in all)", got, c.want, c.n)
			}
			if src.File != c.fromFile {
				t.Errorf("%d negatives from the file, want %d", src.File, c.fromFile)
			}
		})
	}
}

func readState(t *testing.T, out string) State {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(out, "checkpoints", "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestRunExportsValidatesAndResumes: a full run writes a loadable model folder with TRAINING.md
// and a validation curve; a run stopped after step 2 and resumed gives the same losses as the
// uninterrupted run, step by step.
func TestRunExportsValidatesAndResumes(t *testing.T) {
	full := filepath.Join(t.TempDir(), "full")
	cfg := runConfig(t, full)
	st, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if st.Step != 6 || len(st.Losses) != 6 {
		t.Fatalf("steps %d, losses %d, want 6", st.Step, len(st.Losses))
	}
	if st.Negatives != (NegativeSources{File: 10}) {
		t.Errorf("negative sources %+v, want all 10 from negatives.jsonl", st.Negatives)
	}
	var valSteps []int
	for _, v := range st.Val {
		valSteps = append(valSteps, v.Step)
	}
	if len(valSteps) != 3 || valSteps[0] != 0 || valSteps[1] != 3 || valSteps[2] != 6 {
		t.Errorf("validation at steps %v, want [0 3 6]", valSteps)
	}
	md, err := os.ReadFile(filepath.Join(full, "TRAINING.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| seed | 7", "## Validation (dev MRR)", "| 0 | ", "## Loss"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("TRAINING.md lacks %q", want)
		}
	}
	m, err := encode.Open(full, encode.Options{Runtime: cfg.EncodeRuntime, Threads: 1, LoadTokenizer: LoadEncodeTokenizer})
	if err != nil {
		t.Fatalf("exported folder does not load in pkg/encode: %v", err)
	}
	m.Close()

	part := filepath.Join(t.TempDir(), "part")
	pc := runConfig(t, part)
	pc.stopAfter = 2
	if _, err := Run(context.Background(), pc); !errors.Is(err, errStopped) {
		t.Fatalf("stopped run: %v", err)
	}
	if got := readState(t, part).Step; got != 2 {
		t.Fatalf("stopped run saved step %d, want 2", got)
	}
	// An ended context (SIGINT) stops the run before its next step, the checkpoint saved at the
	// step reached; the resume below is unaffected.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, runConfig(t, part)); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "stopped at step 2 of") {
		t.Fatalf("run with an ended context: %v", err)
	}
	if got := readState(t, part).Step; got != 2 {
		t.Fatalf("after the ended context the state is at step %d, want 2", got)
	}
	// A resume with another learning rate (or warm-up, epochs, negatives) was accepted and
	// changed the schedule mid-run; it is refused, and the run stays resumable.
	bad := runConfig(t, part)
	bad.LR *= 10
	if _, err := Run(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "is resumed with") {
		t.Fatalf("resume with another lr: %v", err)
	}
	// A kill between the pair's renames: the checkpoint (step 2) is in place, its state still
	// state.json.next, state.json one save behind (here: step 1). The resume puts the state in
	// place (it failed: "last.ckpt is at step 2, state.json at 1"). A checkpoint left .next (a
	// kill before the first rename) is dropped with its state, the old pair standing.
	ckDir := filepath.Join(part, "checkpoints")
	cur, err := os.ReadFile(filepath.Join(ckDir, "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	behind := readState(t, part)
	behind.Step = 1
	stale, _ := json.Marshal(behind)
	os.WriteFile(filepath.Join(ckDir, "state.json.next"), cur, 0o644)
	os.WriteFile(filepath.Join(ckDir, "state.json"), stale, 0o644)
	if err := settlePair(filepath.Join(ckDir, "last.ckpt"), filepath.Join(ckDir, "state.json")); err != nil {
		t.Fatal(err)
	}
	if got := readState(t, part).Step; got != 2 {
		t.Fatalf("after settling an interrupted save the state is at step %d, want 2", got)
	}
	os.WriteFile(filepath.Join(ckDir, "last.ckpt.next"), []byte("half"), 0o644)
	os.WriteFile(filepath.Join(ckDir, "state.json.next"), stale, 0o644)
	if err := settlePair(filepath.Join(ckDir, "last.ckpt"), filepath.Join(ckDir, "state.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ckDir, "last.ckpt.next")); !os.IsNotExist(err) || readState(t, part).Step != 2 {
		t.Fatalf("a half-saved checkpoint was not dropped (%v) or the state moved", err)
	}
	rc := runConfig(t, part)
	rst, err := Run(context.Background(), rc)
	if err != nil {
		t.Fatal(err)
	}
	if len(rst.Losses) != len(st.Losses) {
		t.Fatalf("resumed run has %d losses, uninterrupted %d", len(rst.Losses), len(st.Losses))
	}
	for i := range st.Losses {
		if d := rst.Losses[i] - st.Losses[i]; d > 1e-4 || d < -1e-4 {
			t.Errorf("step %d: resumed loss %.6f, uninterrupted %.6f", i+1, rst.Losses[i], st.Losses[i])
		}
	}
}

// TestRunStopsOnDivergence: an absurd learning rate makes the loss explode or turn NaN; the run
// stops with ErrDiverged, names the last good checkpoint, and that checkpoint still loads.
func TestRunStopsOnDivergence(t *testing.T) {
	out := filepath.Join(t.TempDir(), "bad")
	cfg := runConfig(t, out)
	cfg.LR, cfg.Warmup, cfg.ValSplit = 1e38, 0, "-"
	cfg.CheckpointEvery = 1
	_, runErr := Run(context.Background(), cfg)
	if !errors.Is(runErr, ErrDiverged) {
		t.Fatalf("want ErrDiverged, got %v", runErr)
	}
	if !strings.Contains(runErr.Error(), "last good checkpoint: "+filepath.Join(out, "checkpoints", "last.ckpt")) {
		t.Errorf("message does not name the last good checkpoint: %v", runErr)
	}
	st := readState(t, out)
	s, err := cfg.Runtime.OpenSession(cfg.Artifacts, filepath.Join(out, "checkpoints", "last.ckpt"), SessionOptions{Threads: 1})
	if err != nil {
		t.Fatalf("last good checkpoint (step %d) does not load: %v", st.Step, err)
	}
	defer s.Close()
	if s.CheckpointStep() != st.Step {
		t.Errorf("checkpoint step %d, state step %d", s.CheckpointStep(), st.Step)
	}
	t.Logf("%v", runErr)
}

func TestPlanBatchesAvoidsFalseNegatives(t *testing.T) {
	rel := func(ids ...string) map[string]bool {
		m := map[string]bool{}
		for _, id := range ids {
			m[id] = true
		}
		return m
	}
	ex := []Example{
		{QueryID: "q0", PositiveID: "A", NegativeIDs: []string{"B"}, Relevant: rel("A")},
		{QueryID: "q1", PositiveID: "B", NegativeIDs: []string{"C"}, Relevant: rel("B")}, // e0's negative is its positive
		{QueryID: "q2", PositiveID: "C", NegativeIDs: []string{"D"}, Relevant: rel("C")}, // e1's negative is its positive
		{QueryID: "q3", PositiveID: "E", NegativeIDs: []string{"F"}, Relevant: rel("E")},
		{QueryID: "q0", PositiveID: "G", NegativeIDs: []string{"H"}, Relevant: rel("A", "G")}, // same query as e0
		{QueryID: "q5", PositiveID: "I", NegativeIDs: []string{"J"}},                          // Relevant nil: only I
	}
	cases := []struct {
		order []int
		size  int
		want  string
	}{
		// Hand-traced: e1 waits for the second batch, e4 cannot join e0.
		{[]int{0, 1, 2, 3, 4, 5}, 2, "[[0 2] [1 3] [4 5]]"},
		{[]int{0, 4, 1, 3, 2, 5}, 2, "[[0 3] [4 1] [2 5]]"}, // e4 (same query) and e1 (e0's negative) wait
		{[]int{0, 1, 2}, 3, "[]"},                           // e0 and e2 alone cannot fill a batch of 3
		{[]int{3, 5, 0}, 3, "[[3 5 0]]"},
	}
	for _, c := range cases {
		if got := fmt.Sprint(PlanBatches(ex, c.order, c.size)); got != c.want {
			t.Errorf("order %v size %d: %s, want %s", c.order, c.size, got, c.want)
		}
	}
}
