package synth

import (
	"encoding/json"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rated-dev/rated/configs"
	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/retrieve"
)

// A candidate configuration names its base and changes a few keys; the rest, and RATED_LLM_*
// overrides of keys only the base sets, come through.
func TestLoadLLMConfigBase(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "llm.yaml"), []byte("# base\nhost: 127.0.0.1\nport: 18434\nmodel: gemma\ntemperature: 0.8\ntimeout_s: 120\nchat_template: plain\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "cand"), 0o755)
	cand := filepath.Join(dir, "cand", "q.yaml")
	os.WriteFile(cand, []byte("# candidate\nbase: ../llm.yaml\nport: 18435\nmodel: qwen\nprompt_style: instruct\nweights_chunks: 6\n"), 0o644)
	env := map[string]string{"RATED_LLM_TIMEOUT_S": "900"}
	c, err := LoadLLMConfig(cand, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if c.Host != "127.0.0.1" || c.Port != 18435 || c.Model != "qwen" || c.Temperature != 0.8 || c.TimeoutS != 900 ||
		c.ChatTemplate != "plain" || c.PromptStyle != StyleInstruct || c.WeightsChunks != 6 {
		t.Fatalf("config %+v", c)
	}
	base, err := LoadLLMConfig(filepath.Join(dir, "llm.yaml"), func(string) string { return "" })
	if err != nil || base.PromptStyle != StyleContinuation || base.Port != 18434 {
		t.Fatalf("base alone: %+v %v", base, err)
	}
	os.WriteFile(cand, []byte("base: ../llm.yaml\nprompt_style: chatty\n"), 0o644)
	if _, err := LoadLLMConfig(cand, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "chatty") {
		t.Fatalf("bad prompt_style: %v", err)
	}
	os.WriteFile(cand, []byte("base: q.yaml\n"), 0o644)
	if _, err := LoadLLMConfig(cand, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Fatalf("a base cycle: %v", err)
	}
	os.WriteFile(cand, []byte("base: ../missing.yaml\n"), 0o644)
	if _, err := LoadLLMConfig(cand, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Fatalf("a missing base: %v", err)
	}
}

// The committed candidate configurations decode, bind to loopback on ports of their own, and
// pin a sha256.
func TestRepoCandidateConfigs(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "configs", "llm-candidates", "*.yaml"))
	if len(paths) != 3 {
		t.Fatalf("candidates: %v", paths)
	}
	ports := map[int]string{18434: "configs/llm.yaml"}
	for _, p := range paths {
		c, err := LoadLLMConfig(p, func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		if c.Host != "127.0.0.1" || len(c.GGUFSHA256) != 64 || c.PromptStyle != StyleInstruct || c.ChatTemplate != "chatml" || c.WeightsChunks < 1 {
			t.Errorf("%s: %+v", p, c)
		}
		if other, dup := ports[c.Port]; dup {
			t.Errorf("%s: port %d is also %s's", p, c.Port, other)
		}
		ports[c.Port] = p
	}
}

func TestSynMessagesStyles(t *testing.T) {
	tool := catalog.Tool{ID: "x/send", Name: "Gmail: Send a message", Platform: "n8n", Description: "Sends an email.\nConsume the Gmail API",
		Parameters: []catalog.Parameter{{Name: "to", Type: "string", Description: "recipient"}}}
	msgs, stop, prefix := SynMessages(StyleContinuation, tool, 7)
	if len(msgs) != 1 || msgs[0].Content != SynPrompt(tool, 7) || prefix != "1. " || len(stop) != 2 {
		t.Fatalf("continuation: %+v %q %q", msgs, stop, prefix)
	}
	msgs, stop, prefix = SynMessages(StyleInstruct, tool, 7)
	want := "Tool: Gmail: Send a message\nPlatform: n8n\nDescription: Sends an email. Consume the Gmail API\nParameters:\n- to (string): recipient"
	if len(msgs) != 1 || msgs[0].Role != "user" || stop != nil || prefix != "" ||
		!strings.Contains(msgs[0].Content, "Write 7 different messages") ||
		!strings.Contains(msgs[0].Content, "\n\n"+want+"\n\n") || !strings.HasSuffix(msgs[0].Content, "numbered list of the 7 messages only.") {
		t.Fatalf("instruct: %+v", msgs)
	}
	vm, vstop := ValidatorMessages(StyleInstruct, "send mail", tool)
	if len(vm) != 1 || !strings.HasSuffix(vm[0].Content, "Score:"+ValidatorInstructSuffix) || len(vstop) != 1 {
		t.Fatalf("validator instruct: %+v", vm)
	}
	vm, _ = ValidatorMessages(StyleContinuation, "send mail", tool)
	if vm[0].Content != ValidatorPrompt("send mail", tool) {
		t.Fatalf("validator continuation: %+v", vm)
	}
}

// With a corpus larger than the tools queries were generated for, the benchmark keeps the whole
// corpus and random negatives come from all of it.
func TestAssembleSynFullCorpus(t *testing.T) {
	var corpus []catalog.Tool
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		corpus = append(corpus, catalog.Tool{ID: id, Name: id, Description: "tool " + id, Platform: "n8n"})
	}
	j, err := OpenJournal(filepath.Join(t.TempDir(), "syn.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	raw := "1. please send the quarterly report to my manager today\n2. translate this short letter into german for my aunt"
	if err := j.Append(Record{Key: SynKey(2, "b"), OK: true, ToolID: "b", Raw: raw, ElapsedMS: 60000}); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultSynConfig()
	cfg.QueriesPerTool, cfg.Negatives.Hard, cfg.Negatives.Random, cfg.Corpus = 2, 0, 4, corpus
	bm25 := retrieve.NewBM25(bench.DocsFromTools(corpus), retrieve.DefaultBM25Params())
	res, err := AssembleSyn(corpus[1:2], j, bm25, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// 2 queries parsed in 60 s of requests at concurrency 2: 2 / (1 min / 2) = 4 per minute.
	if len(res.Bench.Corpus) != 5 || res.Stats.Tools != 1 || res.Stats.Queries != 2 || res.Stats.RequestSeconds != 60 || res.Stats.QueriesPerMinute != 4 {
		t.Fatalf("corpus %d, stats %+v", len(res.Bench.Corpus), res.Stats)
	}
	for _, n := range res.Negatives {
		seen := map[string]bool{}
		for _, x := range n.Negatives {
			seen[x.ToolID] = true
		}
		// 4 random negatives among the 4 other tools of the corpus: all of them.
		if len(seen) != 4 || seen["b"] {
			t.Fatalf("negatives %+v", n)
		}
	}
	cfg.Corpus = corpus[2:]
	if _, err := AssembleSyn(corpus[1:2], j, bm25, cfg); err == nil {
		t.Fatal("a tool outside the corpus was accepted")
	}
}

func TestSynAuditSampleAndSummary(t *testing.T) {
	b := &bench.Bench{Splits: map[string]bench.Qrels{"train": {}, "test": {}}}
	for i := 0; i < 10; i++ {
		id := string(rune('a' + i))
		b.Queries = append(b.Queries, bench.Query{ID: "q" + id, Text: "query number " + id})
		split := "train"
		if i%3 == 0 {
			split = "test"
		}
		b.Splits[split]["q"+id] = map[string]int{"tool-" + id: 1}
	}
	items, err := SampleSynAudit(b, 4, rand.New(rand.NewPCG(1, 2)))
	if err != nil || len(items) != 4 {
		t.Fatalf("%v %+v", err, items)
	}
	again, _ := SampleSynAudit(b, 4, rand.New(rand.NewPCG(1, 2)))
	for i := range items {
		if items[i] != again[i] || items[i].ToolID != "tool-"+strings.TrimPrefix(items[i].QueryID, "q") {
			t.Fatalf("sample %+v / %+v", items, again)
		}
		if i > 0 && items[i-1].QueryID >= items[i].QueryID {
			t.Fatalf("not ordered: %+v", items)
		}
	}
	all, _ := SampleSynAudit(b, 50, rand.New(rand.NewPCG(1, 2)))
	if len(all) != 10 {
		t.Fatalf("all: %d", len(all))
	}
	// Five rows, hand-counted: judged 4 (3 right), labelled 5 (3 right), judged and labelled 4
	// (agree on 3; of the 3 judged right 2 are right by hand; of the 2 wrong by hand the judge
	// calls 1 right), ranks 1, 3, 101, 7 (top-1 1/4, top-5 2/4), lengths 2, 3, 5, 5, 9 words,
	// one exact duplicate pair (case and punctuation aside).
	csv := "query_id,query,retriever_rank,judge_keep,human_label\n" +
		"1,send mail now,1,1,1\n2,\"Send mail, now!\",3,1,0\n3,book a flight to rome,101,0,0\n4,hi there,,,1\n5,one two three four five six seven eight nine,7,1,1\n"
	p := filepath.Join(t.TempDir(), "audit.csv")
	os.WriteFile(p, []byte(csv), 0o644)
	s, err := ReadSynAudit(p)
	if err != nil {
		t.Fatal(err)
	}
	if s.Sampled != 5 || s.Judged != 4 || s.JudgeRight != 3 || s.JudgePrecision != 0.75 || s.Labelled != 5 || s.HumanRight != 3 ||
		s.HumanPrecision != 0.6 || s.JudgeHumanBoth != 4 || s.JudgeHumanAgree != 3 || s.WordsMin != 2 || s.WordsMax != 9 ||
		s.WordsMedian != 3 || s.WordsMean != 4.4 || s.DistinctShare != 0.6 || s.Ranked != 4 || s.Top1 != 0.25 || s.Top5 != 0.5 ||
		s.HumanRightWhereJudgeRight != 2.0/3 || s.JudgeRightWhereHumanWrong != 0.5 {
		js, _ := json.Marshal(s)
		t.Fatalf("summary %s", js)
	}
	// Writing the sample again (now judged) keeps the labels a person put in the file.
	tools := []catalog.Tool{{ID: "tool-a", Name: "A"}}
	items = []SynAuditItem{{QueryID: "qa", Query: "query number a", ToolID: "tool-a"}, {QueryID: "qb", Query: "query number b", ToolID: "tool-a"}}
	out := filepath.Join(t.TempDir(), "syn.csv")
	if err := WriteSynAuditCSV(out, items, tools, 0.85); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(out)
	os.WriteFile(out, []byte(strings.Replace(string(raw), "query number b,3,tool-a,A,,,,,", "query number b,3,tool-a,A,,,,,0", 1)), 0o644)
	items[0].Judged, items[0].JudgeScore, items[1].Judged, items[1].JudgeScore = true, 0.9, true, 0.5
	if err := WriteSynAuditCSV(out, items, tools, 0.85); err != nil {
		t.Fatal(err)
	}
	if s, err := ReadSynAudit(out); err != nil || s.Judged != 2 || s.JudgeRight != 1 || s.Labelled != 1 || s.HumanRight != 0 || s.JudgeHumanAgree != 1 {
		raw, _ = os.ReadFile(out)
		t.Fatalf("rewritten audit %+v %v\n%s", s, err, raw)
	}
	os.WriteFile(p, []byte("query_id,query,judge_keep,human_label\n1,x,1,maybe\n"), 0o644)
	if _, err := ReadSynAudit(p); err == nil || !strings.Contains(err.Error(), ":2:") {
		t.Fatalf("bad label: %v", err)
	}
}

// The retriever check ranks each query's intended tool: a query about e-mail written for the
// weather tool does not find the weather tool at all under BM25 (no shared word).
func TestRankSynAudit(t *testing.T) {
	tools := []catalog.Tool{
		{ID: "mail", Name: "Send email", Description: "Sends an email message to a recipient"},
		{ID: "weather", Name: "Weather forecast", Description: "Returns the weather forecast for a city"},
		// Two more documents so that a word in one document has a positive BM25 idf.
		{ID: "stock", Name: "Stock quote", Description: "Latest price of a share"},
		{ID: "translate", Name: "Translate", Description: "Translates text between languages"},
	}
	bm25 := retrieve.NewBM25(bench.DocsFromTools(tools), retrieve.DefaultBM25Params())
	items := []SynAuditItem{
		{QueryID: "1", Query: "send an email to my sister", ToolID: "mail"},
		{QueryID: "2", Query: "send an email to my sister", ToolID: "weather"},
		{QueryID: "3", Query: "weather forecast for Oslo", ToolID: "weather"},
		{QueryID: "4", Query: "weather forecast for Oslo", ToolID: "absent"},
	}
	if err := RankSynAudit(bm25, items); err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{1, RankDepth + 1, 1, RankDepth + 1} {
		if items[i].Rank != want {
			t.Errorf("item %d: rank %d, want %d", i+1, items[i].Rank, want)
		}
	}
}

// TestThroughputOverResumedConcurrencies: a journal written at concurrency 2 and resumed at 4
// reported its whole request time divided by 4. Tool a: 2 queries in 60 s at 2 slots (30 busy
// seconds); tool b: 2 queries in 120 s at 4 (30): 4 queries in one busy minute.
func TestThroughputOverResumedConcurrencies(t *testing.T) {
	corpus := []catalog.Tool{{ID: "a", Name: "a", Description: "tool a", Platform: "n8n"}, {ID: "b", Name: "b", Description: "tool b", Platform: "n8n"}}
	j, err := OpenJournal(filepath.Join(t.TempDir(), "syn.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	raw := "1. please send the quarterly report to my manager today\n2. translate this short letter into german for my aunt"
	raw2 := "1. book a table for four people at eight tonight\n2. find me a cheap flight to lisbon next friday"
	for _, r := range []Record{{Key: SynKey(2, "a"), OK: true, ToolID: "a", Raw: raw, ElapsedMS: 60000, Concurrency: 2},
		{Key: SynKey(2, "b"), OK: true, ToolID: "b", Raw: raw2, ElapsedMS: 120000, Concurrency: 4}} {
		if err := j.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	cfg := DefaultSynConfig()
	cfg.QueriesPerTool, cfg.Negatives.Hard, cfg.Negatives.Random, cfg.Concurrency = 2, 0, 1, 4
	res, err := AssembleSyn(corpus, j, retrieve.NewBM25(bench.DocsFromTools(corpus), retrieve.DefaultBM25Params()), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if st := res.Stats; st.QueriesParsed != 4 || st.RequestSeconds != 180 || st.QueriesPerMinute != 4 || st.RequestsWithoutConcurrency != 0 {
		t.Fatalf("stats %+v, want 4 parsed in 180 s, 4 per busy minute", st)
	}
}

// TestLLMConfigValuesAreChecked: values that ran with another meaning or failed mid-run are
// refused naming the file, the key and the variable that set it; the shipped configurations load.
func TestLLMConfigValuesAreChecked(t *testing.T) {
	base := "host: 127.0.0.1\nport: 18434\nmodel: m\ntemperature: 0.8\ntimeout_s: 30\nconcurrency: 2\n"
	for _, c := range []struct{ extra, env, want string }{
		{"retries: -1\n", "", "retries: -1: must be >= 0"},
		{"", "RATED_LLM_TEMPERATURE=-0.5", "temperature (set by RATED_LLM_TEMPERATURE): -0.5: must be in [0, 2]"},
		{"", "RATED_LLM_TIMEOUT_S=0", "timeout_s (set by RATED_LLM_TIMEOUT_S): 0: a request timeout must be > 0"},
		{"", "RATED_LLM_CONCURRENCY=-2", "concurrency (set by RATED_LLM_CONCURRENCY): -2"},
		{"", "RATED_LLM_PORT=70000", "port (set by RATED_LLM_PORT): 70000"},
		{"min_retrieval_cosine: 1.5\n", "", "min_retrieval_cosine: 1.5: a cosine is in [-1, 1]"},
		{"gguf_sha256: ABC\n", "", `gguf_sha256: "ABC": want 64 lower-case hex digits`},
		{"max_tokens: -5\n", "", "max_tokens: -5"},
	} {
		p := filepath.Join(t.TempDir(), "llm.yaml")
		os.WriteFile(p, []byte(base+c.extra), 0o644)
		env := map[string]string{}
		if k, v, ok := strings.Cut(c.env, "="); ok {
			env[k] = v
		}
		_, err := LoadLLMConfig(p, func(k string) string { return env[k] })
		if err == nil || !strings.Contains(err.Error(), "llm config "+p+": "+c.want) {
			t.Errorf("%q %s: %v, want %q", c.extra, c.env, err, c.want)
		}
	}
	names, err := fs.Glob(configs.Files, "llm-candidates/*.yaml")
	if err != nil || len(names) == 0 {
		t.Fatalf("no shipped candidates: %v", err)
	}
	for _, n := range append(names, "llm.yaml") {
		if _, err := LoadLLMConfig("configs/"+n, func(string) string { return "" }); err != nil {
			t.Errorf("configs/%s: %v", n, err)
		}
	}
}

func TestCheckPlatforms(t *testing.T) {
	tools := []catalog.Tool{{ID: "a", Platform: "n8n"}, {ID: "b", Platform: "LangChain"}}
	if err := CheckPlatforms(tools, []string{" N8N", "langchain"}); err != nil {
		t.Fatal(err)
	}
	if err := CheckPlatforms(tools, nil); err != nil {
		t.Fatal(err)
	}
	err := CheckPlatforms(tools, []string{"n8n", "langchian"})
	if err == nil || err.Error() != `--platforms "langchian": no tool of the catalog is on that platform (platforms: langchain, n8n)` {
		t.Fatalf("a misspelled platform beside a good one: %v", err)
	}
}
