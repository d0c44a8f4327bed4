package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rated-dev/rated/data"
	"github.com/rated-dev/rated/internal/atomicfile"
	"github.com/rated-dev/rated/internal/outdir"
	"github.com/rated-dev/rated/internal/progress"
	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/defaultbench"
	"github.com/rated-dev/rated/pkg/encode"
	"github.com/rated-dev/rated/pkg/home"
	"github.com/rated-dev/rated/pkg/retrieve"
	"github.com/rated-dev/rated/pkg/synth"
	"github.com/spf13/cobra"
)

type buildBenchFlags struct {
	catalog, out, config, realQueries, retriever, digestFile string
	tools, perPlatform, realLimit, topK                      int
	platforms                                                []string
	sampleSeed, splitSeed, negSeed                           uint64
	seed                                                     int64
	concurrency, hard, random                                int
	minScore, keepScore, minSuccess                          float64
	noSyn, noReal, retrievalOnly, fullCorpus, adoptJournal   bool
	enc                                                      encodingFlags
}

// newBuildBenchCmd is `rated build-bench`: EcoAgent-Syn and EcoAgent-Real from a catalog, with a
// real LLM behind an OpenAI-compatible endpoint (configs/llm.yaml), resumable through journals
// under --out.
func newBuildBenchCmd() *cobra.Command {
	var f buildBenchFlags
	syn, real := synth.DefaultSynConfig(), synth.DefaultRealConfig()
	cmd := &cobra.Command{
		Use:   "build-bench",
		Short: "Build EcoAgent-Syn and EcoAgent-Real (BEIR layout) from a catalog with a local LLM",
		Long: `Builds EcoAgent-Syn (LLM-written queries per tool, length filter, near-duplicate removal,
hard and random negatives, train/dev/test splits) and EcoAgent-Real (ToolBench queries, retriever
top-k candidates, LLM validator) into --out: syn/ and real/ in the BEIR layout, syn/negatives.jsonl,
stats.json and DATASHEET.md, as one set: a failed or interrupted run leaves --out as it was.
Every finished request is journaled under --out/journal, keyed by every setting that changes
its answer (model and digest, seed, temperature, prompt), so an interrupted run (even kill -9)
resumes where it stopped when rerun with the same flags, and a run with other settings asks
again. The LLM server must be running: rated llm up.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runBuildBench(c, f, syn, real)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.catalog, "catalog", "", "catalog JSONL (default: the embedded default benchmark's catalog)")
	fl.StringVar(&f.out, "out", "", "output directory (required)")
	fl.StringVar(&f.config, "config", "", "LLM configuration (default: configs/llm.yaml, embedded in the binary)")
	fl.StringVar(&f.digestFile, "model-file", "", "weights file whose sha256 is recorded (default <asset home>/<gguf of the config>)")
	fl.IntVar(&f.tools, "tools", 0, "use at most this many tools (0: all)")
	fl.StringSliceVar(&f.platforms, "platforms", nil, "use only these platforms (comma-separated; default all)")
	fl.BoolVar(&f.fullCorpus, "full-corpus", false, "keep the whole catalog as the corpus, the pool of negatives and the Real candidates' catalog; --tools/--platforms/--per-platform then only choose the tools Syn queries are generated for")
	fl.IntVar(&f.perPlatform, "per-platform", 0, "use at most this many tools per platform (0: all)")
	fl.Uint64Var(&f.sampleSeed, "sample-seed", 1, "seed of the tool sampling")
	fl.IntVar(&syn.QueriesPerTool, "queries-per-tool", syn.QueriesPerTool, "queries asked per tool (the paper: 10-20)")
	fl.IntVar(&syn.MinWords, "min-words", syn.MinWords, "shortest kept query, in words")
	fl.IntVar(&syn.MaxWords, "max-words", syn.MaxWords, "longest kept query, in words")
	fl.Float64Var(&syn.DedupeThreshold, "dedupe", syn.DedupeThreshold, "drop queries with word-set Jaccard above this to a kept one")
	fl.IntVar(&f.hard, "hard-negatives", syn.Negatives.Hard, "hard negatives per positive")
	fl.IntVar(&f.random, "random-negatives", syn.Negatives.Random, "random negatives per positive")
	fl.Uint64Var(&f.splitSeed, "split-seed", syn.SplitSeed, "seed of the split assignment (Syn; Real uses it + 4)")
	fl.Uint64Var(&f.negSeed, "negative-seed", syn.NegativeSeed, "seed of the random negatives")
	fl.Int64Var(&f.seed, "seed", 0, "generation seed (0: the config's seed)")
	fl.IntVar(&f.concurrency, "concurrency", 0, "requests in flight (0: the config's concurrency)")
	f.enc.register(fl)
	fl.StringVar(&f.retriever, "retriever", "", "retriever for hard negatives and Real candidates: auto or dense (the first installed encoder; missing is an error), bm25, dense:<model folder name, path or openai:URL[#MODEL]> (default: the config's retriever, else auto)")
	fl.StringVar(&f.realQueries, "real-queries", "", "ToolBench queries for EcoAgent-Real (default: the 765 embedded in the binary, "+data.ToolBenchQueriesName+")")
	fl.IntVar(&f.realLimit, "real-limit", 0, "use the first N real queries (0: all)")
	fl.IntVar(&f.topK, "top-k", real.TopK, "candidate tools per real query")
	fl.Float64Var(&f.minScore, "min-retrieval-score", 0, "drop Real candidates scoring below this under the retriever (default: the config's min_retrieval_cosine, 0.7, for a dense retriever; 0 for BM25, whose scores have no fixed scale)")
	fl.Float64Var(&f.keepScore, "keep-score", real.KeepScore, "keep Real pairs the validator scores at least this")
	fl.BoolVar(&f.noSyn, "no-syn", false, "skip EcoAgent-Syn")
	fl.BoolVar(&f.noReal, "no-real", false, "skip EcoAgent-Real")
	fl.BoolVar(&f.retrievalOnly, "retrieval-only", false, "only retrieve the Real candidates and write their score distribution to --out/retrieval.json (no LLM)")
	fl.Float64Var(&f.minSuccess, "min-success", 0.5, "fail, writing nothing, when fewer than this share of the tools (Syn) or of the validated pairs (Real) succeed")
	fl.BoolVar(&f.adoptJournal, "adopt-journal", false, "reuse journal records written before the settings (or the filled-in prompt) were part of their key, as made with this run's model, seed, sampling settings and tool and query texts")
	_ = cmd.MarkFlagRequired("out")
	cmd.AddCommand(newAuditCmd(), newAuditSynCmd())
	return cmd
}

// checkBuildBenchCounts refuses, before anything is read or asked, settings that cannot build a
// benchmark: --top-k or --queries-per-tool below 1; negative --tools, --per-platform,
// --real-limit, --concurrency, --hard-negatives, --random-negatives or --min-words (0 means all,
// or the config's value, where the flag says so); --max-words below --min-words; --dedupe
// outside (0, 1) (synth.NewDeduper's range); --keep-score or --min-success outside [0, 1]; and
// --no-syn with --no-real.
func checkBuildBenchCounts(f buildBenchFlags, syn synth.SynConfig) error {
	switch {
	case f.topK < 1:
		return fmt.Errorf("--top-k %d: each real query needs at least 1 candidate tool", f.topK)
	case !f.noSyn && syn.QueriesPerTool < 1:
		return fmt.Errorf("--queries-per-tool %d: must be at least 1", syn.QueriesPerTool)
	case syn.MinWords < 0:
		return fmt.Errorf("--min-words %d: must be >= 0", syn.MinWords)
	case syn.MaxWords < syn.MinWords:
		return fmt.Errorf("--max-words %d: below --min-words %d, every query would be dropped", syn.MaxWords, syn.MinWords)
	case f.noSyn && f.noReal && !f.retrievalOnly:
		return errors.New("--no-syn and --no-real: nothing left to build")
	case !(syn.DedupeThreshold > 0 && syn.DedupeThreshold < 1): // NaN too
		return fmt.Errorf("--dedupe %v: must be in (0, 1): 0 would drop every query sharing a word, 1 none", syn.DedupeThreshold)
	}
	for _, c := range []struct {
		flag string
		v    float64
	}{{"keep-score", f.keepScore}, {"min-success", f.minSuccess}} {
		if math.IsNaN(c.v) || c.v < 0 || c.v > 1 {
			return fmt.Errorf("--%s %v: must be in [0, 1]", c.flag, c.v)
		}
	}
	for _, c := range []struct {
		flag string
		v    int
	}{{"tools", f.tools}, {"per-platform", f.perPlatform}, {"real-limit", f.realLimit}, {"concurrency", f.concurrency},
		{"hard-negatives", f.hard}, {"random-negatives", f.random}} {
		if c.v < 0 {
			return fmt.Errorf("--%s %d: must be >= 0", c.flag, c.v)
		}
	}
	return nil
}

func loadCatalog(path string) ([]catalog.Tool, string, error) {
	if path != "" {
		tools, err := catalog.ReadJSONL(path)
		return tools, path, err
	}
	b, err := defaultbench.Load()
	if err != nil {
		return nil, "", fmt.Errorf("embedded default benchmark: %w", err)
	}
	if len(b.Tools) == 0 {
		return nil, "", fmt.Errorf("embedded default benchmark has no catalog; pass --catalog")
	}
	return b.Tools, "embedded default benchmark (pkg/defaultbench)", nil
}

// benchRetriever is the retriever build-bench uses, with how it was chosen.
type benchRetriever struct {
	retrieve.Retriever
	// requested is the --retriever value; choice says why this retriever was used; modelDir is
	// the encoder's model folder (dense only).
	requested, choice, modelDir string
	close                       func()
}

// openBenchRetriever resolves --retriever: "bm25"; "dense:<spec>" (an installed model folder name,
// a folder path, or openai:URL[#MODEL]); "dense" or "auto" (the first installed encoder, in
// retrieve.PreferredEncoders order). A missing encoder is an error naming the asset home and
// `rated setup models`: there is no silent fallback to BM25. Encoding the corpus reports to prog.
func openBenchRetriever(ctx context.Context, spec string, h home.Home, flags encodingFlags, docs []bench.Doc, prog synth.Progress) (*benchRetriever, error) {
	spec = strings.TrimSpace(spec)
	lower := strings.ToLower(spec)
	var model string
	switch {
	case lower == "bm25":
		return &benchRetriever{Retriever: retrieve.NewBM25(docs, retrieve.DefaultBM25Params()), requested: spec, choice: "requested", close: func() {}}, nil
	case lower == "auto" || lower == "dense":
	case strings.HasPrefix(lower, "dense:"):
		model = spec[len("dense:"):]
		if model == "" {
			return nil, fmt.Errorf("--retriever %q: no model named after \"dense:\"", spec)
		}
	default:
		return nil, fmt.Errorf("unknown retriever %q (available: auto, bm25, dense, dense:<model>)", spec)
	}
	opts, err := flags.apply(encode.Options{CacheDir: h.EmbeddingCache()})
	if err != nil {
		return nil, err
	}
	enc, err := encoderSource(h, opts).Open(model)
	if err != nil {
		return nil, fmt.Errorf("--retriever %s: %w; or pass --retriever bm25", spec, err)
	}
	started := false
	prev := 0
	dense, err := retrieve.NewDense(enc, docs, retrieve.DenseOptions{Context: ctx, Progress: func(done, total int) {
		if !started {
			prog.Start("encode tools", total, 0)
			started = true
		}
		prog.Add(done - prev)
		prev = done
		if done == total {
			prog.Finish()
		}
	}})
	if err != nil {
		enc.Close()
		return nil, fmt.Errorf("--retriever %s: %w", spec, err)
	}
	choice := "requested"
	if model == "" {
		choice = lower + ": first installed encoder (preference: " + strings.Join(retrieve.PreferredEncoders, ", ") + ", then by name)"
	}
	return &benchRetriever{Retriever: dense, requested: spec, choice: choice, modelDir: enc.Dir, close: func() { enc.Close() }}, nil
}

func runBuildBench(c *cobra.Command, f buildBenchFlags, syn synth.SynConfig, real synth.RealConfig) error {
	if err := checkBuildBenchCounts(f, syn); err != nil {
		return err
	}
	// SIGINT and SIGTERM cancel c.Context() (Execute): finished requests stay journaled.
	ctx := c.Context()
	started := time.Now()
	h, err := assetHome(c)
	if err != nil {
		return err
	}
	lc, cfgName, err := loadLLMConfig(f.config)
	if err != nil {
		return err
	}
	if f.seed != 0 {
		lc.Seed = f.seed
	}
	if f.concurrency > 0 {
		lc.Concurrency = f.concurrency
	}
	if !(f.minSuccess >= 0 && f.minSuccess <= 1) {
		return fmt.Errorf("--min-success %v: must be a share in [0, 1]", f.minSuccess)
	}
	all, catPath, err := loadCatalog(f.catalog)
	if err != nil {
		return err
	}
	if err := synth.CheckPlatforms(all, f.platforms); err != nil {
		return fmt.Errorf("%s: %w", catPath, err)
	}
	tools := synth.SampleTools(all, f.tools, f.platforms, f.perPlatform, f.sampleSeed)
	if len(tools) == 0 {
		return fmt.Errorf("no tools left after sampling %s (--tools %d, --platforms %v)", catPath, f.tools, f.platforms)
	}
	// The real queries before any work: a bad --real-queries file was found only after the
	// whole Syn generation (hours on a CPU).
	var queries []synth.RealQuery
	if !f.noReal || f.retrievalOnly {
		if queries, err = readRealQueries(f.realQueries); err != nil {
			return err
		}
		if f.realLimit > 0 && len(queries) > f.realLimit {
			queries = queries[:f.realLimit]
		}
	}
	if !f.retrievalOnly {
		// The set is replaced as a whole: a part this run skips would go, without a word.
		for _, part := range []struct {
			skip       bool
			name, flag string
		}{{f.noSyn, "syn", "--no-syn"}, {f.noReal, "real", "--no-real"}} {
			if _, err := os.Stat(filepath.Join(f.out, part.name)); part.skip && err == nil {
				return fmt.Errorf("%s: --out %s holds %s/ of an earlier run, which this run (%s) would delete with the rest of the output set; choose another --out, or remove it first", part.flag, f.out, part.name, part.flag)
			}
		}
	}
	setOpts := buildBenchOutput()
	if f.retrievalOnly {
		setOpts = buildBenchRetrievalOutput()
	}
	set, err := outdir.Begin(f.out, setOpts)
	if err != nil {
		return err
	}
	defer set.Abort()
	errw := c.ErrOrStderr()
	prog := progress.ForWriter(errw, time.Now)
	if f.retriever == "" {
		f.retriever = lc.Retriever
	}
	if f.retriever == "" {
		f.retriever = "auto"
	}
	// corpus: the benchmark's documents, the negatives' pool and the Real candidates' catalog.
	corpus := tools
	if f.fullCorpus {
		corpus, syn.Corpus = all, all
	}
	ret, err := openBenchRetriever(c.Context(), f.retriever, h, f.enc, bench.DocsFromTools(corpus), prog)
	if err != nil {
		return err
	}
	defer ret.close()
	fmt.Fprintf(errw, "retriever: %s (%s)\n", ret.Name(), ret.choice)
	minCosine := synth.PaperMinCosine
	if lc.MinRetrievalCosine != nil {
		minCosine = *lc.MinRetrievalCosine
	}
	if !c.Flags().Changed("min-retrieval-score") {
		f.minScore = synth.DefaultMinRetrievalScore(ret.Name(), minCosine)
	}
	if f.retrievalOnly {
		return retrievalOnly(c, f, ret, corpus, queries, set)
	}
	client, err := synth.NewClient(lc.ClientConfig(), &http.Client{})
	if err != nil {
		return err
	}
	digest, digestSrc, err := modelDigest(ctx, lc, f, cfgName, h, client)
	if err != nil {
		return err
	}
	journalDir := set.Live("journal")
	if err := os.MkdirAll(journalDir, 0o755); err != nil {
		return err
	}
	ms := synth.ModelSettings{Model: lc.Model, Digest: digest, Temperature: lc.Temperature, MaxTokens: lc.MaxTokens, ChatTemplate: lc.ChatTemplate}
	syn.Seed, syn.Concurrency, syn.PromptStyle = lc.Seed, lc.Concurrency, lc.PromptStyle
	syn.Negatives.Hard, syn.Negatives.Random = f.hard, f.random
	syn.SplitSeed, syn.NegativeSeed = f.splitSeed, f.negSeed
	syn = syn.WithModel(ms)
	syn.AdoptLegacy = f.adoptJournal
	real.Seed, real.Concurrency, real.PromptStyle = lc.Seed, lc.Concurrency, lc.PromptStyle
	real.TopK, real.MinRetrievalScore, real.KeepScore, real.SplitSeed = f.topK, f.minScore, f.keepScore, f.splitSeed+4
	real.DedupeThreshold = syn.DedupeThreshold
	real = real.WithModel(ms)
	real.AdoptLegacy = f.adoptJournal
	info := synth.RunInfo{
		Tool: "rated build-bench", StartedAt: started, CatalogPath: catPath, CatalogSize: len(all),
		ToolsUsed: len(tools), FullCorpus: f.fullCorpus, SampleSeed: f.sampleSeed, Model: lc.Model, BaseURL: lc.ResolvedBaseURL(),
		ModelDigest: digest, DigestSource: digestSrc, Temperature: lc.Temperature, MaxTokens: lc.MaxTokens, Seed: lc.Seed,
		Retriever: ret.Name(), RetrieverRequested: ret.requested, RetrieverChoice: ret.choice, RetrieverModelDir: ret.modelDir,
	}
	out := synth.Output{Info: info}
	interrupted := func(err error) error {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted; finished requests are journaled under %s, rerun the same command to resume", journalDir)
		}
		return err
	}
	openJournal := func(name string) (*synth.Journal, error) {
		j, err := synth.OpenJournal(filepath.Join(journalDir, name))
		if err != nil {
			return nil, err
		}
		if j.Dropped > 0 {
			fmt.Fprintf(errw, "%s: dropped a torn last journal line (%d bytes) left by an interrupted run\n", name, j.Dropped)
		}
		if n := synth.LegacyRecords(j); n > 0 && !f.adoptJournal {
			fmt.Fprintf(errw, "%s: %d records were journaled under an earlier key layout (before the settings, or the filled-in prompt, were part of their key); they are not reused (--adopt-journal reuses them, if they were made with this run's model, seed, sampling settings and tool and query texts)\n", name, n)
		}
		return j, nil
	}
	if !f.noSyn {
		j, err := openJournal("syn.jsonl")
		if err != nil {
			return err
		}
		defer j.Close()
		if err := synth.GenerateSyn(ctx, client, tools, syn, j, prog, time.Now); err != nil {
			return interrupted(err)
		}
		res, err := synth.AssembleSyn(tools, j, ret, syn)
		if err != nil {
			return err
		}
		if err := res.Stats.CheckSuccess(f.minSuccess); err != nil {
			return failedStage(errw, "syn", res.Stats, err)
		}
		out.Syn, out.Info.Syn = res, &syn
	}
	if !f.noReal {
		pairs, err := synth.RealCandidates(ret, queries, corpus, real.TopK)
		if err != nil {
			return err
		}
		rep := synth.ReportRetrieval(len(queries), pairs, ret.Name(), real.MinRetrievalScore)
		fmt.Fprintf(errw, "real: %d of %d candidate pairs score below %g under %s (%s scores, median %.3f); %d of %d queries keep a pair (other thresholds: retrieval_threshold_sweep in stats.json)\n",
			rep.BelowThreshold, rep.CandidatePairs, rep.MinRetrievalScore, rep.Retriever, rep.Scale, rep.Scores.Quant["p50"], rep.QueriesLeft, rep.Queries)
		if rep.QueriesLeft == 0 {
			// Nothing for the validator: an empty Real set would be written and called a success.
			return fmt.Errorf("real: no candidate pair of the %d queries scores at least --min-retrieval-score %g under %s (median %.3f): lower it, or pass --no-real",
				rep.Queries, rep.MinRetrievalScore, rep.Retriever, rep.Scores.Quant["p50"])
		}
		j, err := openJournal("real.jsonl")
		if err != nil {
			return err
		}
		defer j.Close()
		if err := synth.ValidateReal(ctx, client, pairs, corpus, real, j, prog, time.Now); err != nil {
			return interrupted(err)
		}
		res, err := synth.AssembleReal(corpus, queries, pairs, j, ret.Name(), real)
		if err != nil {
			return err
		}
		if err := res.Stats.CheckSuccess(f.minSuccess); err != nil {
			return failedStage(errw, "real", res.Stats, err)
		}
		if res.Stats.Queries == 0 {
			return failedStage(errw, "real", res.Stats, fmt.Errorf("no query kept of %d validated pairs (--keep-score %g)", res.Stats.ValidatedPairs, real.KeepScore))
		}
		out.Real, out.Info.Real, out.Info.RealQueries = res, &real, realQueriesName(f.realQueries)
	}
	out.Info.FinishedAt = time.Now()
	if err := out.Write(set.Dir()); err != nil {
		return err
	}
	if err := set.Commit(); err != nil {
		return err
	}
	w := c.OutOrStdout()
	if out.Syn != nil {
		s := out.Syn.Stats
		fmt.Fprintf(w, "syn: %d/%d tools generated (%d failed), %d queries, %d positive and %d negative pairs, splits %v\n",
			s.ToolsOK, s.Tools, s.ToolsFailed, s.Queries, s.PositivePairs, s.NegativePairs, s.QueriesPerSplit)
		for _, fl := range s.Failures {
			fmt.Fprintf(w, "syn: failed %s: %s\n", fl.Key, fl.Error)
		}
	}
	if out.Real != nil {
		s := out.Real.Stats
		fmt.Fprintf(w, "real: %d queries, %d candidate pairs, %d below retrieval threshold %g (%s), %d validated (%d failed), %d kept; %d queries, %d verified pairs, splits %v\n",
			s.InputQueries, s.CandidatePairs, s.DroppedLowScore, s.MinRetrievalScore, s.Retriever, s.ValidatedPairs, s.ValidationFailed, s.KeptPairsRaw, s.Queries, s.VerifiedPairs, s.QueriesPerSplit)
	}
	fmt.Fprintf(w, "wrote %s (model %s, sha256 %s)\n", f.out, lc.Model, digest)
	return nil
}

// failedStage prints the statistics of a stage that fell under --min-success (they say why) and
// returns its error; nothing is written to --out.
func failedStage(w io.Writer, stage string, stats any, err error) error {
	fmt.Fprintf(w, "%s statistics of the failed run (nothing written; the journal keeps every request):\n", stage)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(stats)
	return err
}

// modelDigest is the digest recorded for the model's weights and where it came from: the sha256
// of --model-file when given; for the local server of configs/llm.yaml, the sha256 of its GGUF
// under the assets (checked against gguf_sha256), else the declared gguf_sha256; for any other
// endpoint, what the endpoint reports, else "unknown" (the local GGUF says nothing about it).
func modelDigest(ctx context.Context, lc synth.LLMConfig, f buildBenchFlags, cfgName string, h home.Home, client *synth.Client) (string, string, error) {
	if f.digestFile != "" {
		d, err := synth.FileSHA256(f.digestFile)
		if err != nil {
			return "", "", fmt.Errorf("--model-file: %w", err)
		}
		return d, "sha256 of " + f.digestFile, nil
	}
	local := fmt.Sprintf("http://%s:%d/v1", lc.Host, lc.Port)
	if base := strings.TrimRight(lc.ResolvedBaseURL(), "/"); base != local {
		d, err := client.ReportedDigest(ctx)
		if d != "" {
			return d, "reported by " + base, nil
		}
		why := "reports no digest of " + lc.Model
		if err != nil {
			why = "gave no digest of " + lc.Model + ": " + err.Error()
		}
		return "unknown", base + " " + why + " (it is not the local server of " + cfgName + ", whose GGUF says nothing about it)", nil
	}
	digest, src := lc.GGUFSHA256, "declared in "+cfgName
	if lc.GGUF != "" {
		p := h.Path(lc.GGUF)
		if d, err := synth.FileSHA256(p); err == nil {
			if lc.GGUFSHA256 != "" && d != lc.GGUFSHA256 {
				return "", "", fmt.Errorf("%s has sha256 %s, but %s declares %s", p, d, cfgName, lc.GGUFSHA256)
			}
			digest, src = d, "sha256 of "+p
		}
	}
	return digest, src, nil
}

// retrievalOnly retrieves the Real candidates of queries (read and limited by runBuildBench) and writes their score report to
// <out>/retrieval.json, without the LLM.
func retrievalOnly(c *cobra.Command, f buildBenchFlags, ret *benchRetriever, tools []catalog.Tool, queries []synth.RealQuery, set *outdir.Set) error {
	pairs, err := synth.RealCandidates(ret, queries, tools, f.topK)
	if err != nil {
		return err
	}
	rep := synth.ReportRetrieval(len(queries), pairs, ret.Name(), f.minScore)
	doc := map[string]any{"retriever_requested": ret.requested, "retriever_choice": ret.choice,
		"retriever_model_dir": ret.modelDir, "real_queries": realQueriesName(f.realQueries), "tools": len(tools), "top_k": f.topK, "report": rep}
	if err := atomicfile.Write(filepath.Join(set.Dir(), "retrieval.json"), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	}); err != nil {
		return err
	}
	if err := set.Commit(); err != nil {
		return err
	}
	path := filepath.Join(f.out, "retrieval.json")
	q := rep.Scores.Quant
	fmt.Fprintf(c.OutOrStdout(), "retrieval: %s, %d queries, %d candidate pairs (top %d of %d tools); scores p5 %.3f p25 %.3f p50 %.3f p75 %.3f p95 %.3f; %d below %g, %d queries left; wrote %s\n",
		rep.Retriever, rep.Queries, rep.CandidatePairs, f.topK, len(tools), q["p5"], q["p25"], q["p50"], q["p75"], q["p95"], rep.BelowThreshold, rep.MinRetrievalScore, rep.QueriesLeft, path)
	return nil
}

// newAuditCmd is `rated build-bench audit`: a stratified sample of validated Real pairs to a CSV
// for a person to label, and, given the labelled CSV back, the agreement with the validator.
func newAuditCmd() *cobra.Command {
	var dir, csvPath, labels, catalogPath, tag string
	var n int
	var seed uint64
	var keep float64
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Sample validated Real pairs to a CSV for a person to label, or report agreement from labels",
		Long: `With --out-csv: samples --n validated EcoAgent-Real pairs from <dir>/journal/real.jsonl,
stratified over validator-score bins, to a CSV with an empty human_label column.
With --labels: reads a labelled CSV and reports the agreement of the validator's keep decision
(score >= --keep-score) with the person's labels, and Cohen's kappa.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			w := c.OutOrStdout()
			if labels != "" {
				a, err := synth.ReadAuditAgreement(labels)
				return printJSON(w, a, err)
			}
			if dir == "" || csvPath == "" {
				return fmt.Errorf("give --dir and --out-csv to sample, or --labels to score")
			}
			j, err := synth.OpenJournal(filepath.Join(dir, "journal", "real.jsonl"))
			if err != nil {
				return err
			}
			defer j.Close()
			if catalogPath == "" {
				catalogPath = filepath.Join(dir, "real", "catalog.jsonl")
			}
			tools, err := catalog.ReadJSONL(catalogPath)
			if err != nil {
				return err
			}
			journalPath := filepath.Join(dir, "journal", "real.jsonl")
			if !c.Flags().Changed("tag") {
				if tag, err = builtRealTag(dir, journalPath, j.Records()); err != nil {
					return err
				}
			}
			recs := synth.RealRecordsOfTag(j.Records(), tag)
			sample := synth.SampleAudit(recs, n, rand.New(rand.NewPCG(seed, 0xa0d17)))
			if len(sample) == 0 {
				return fmt.Errorf("%s: no validated Real pairs to sample under settings tag %q (%d records, %d of that tag)", journalPath, tag, len(j.Records()), len(recs))
			}
			if err := synth.WriteAuditCSV(csvPath, sample, tools, keep); err != nil {
				return err
			}
			fmt.Fprintf(w, "wrote %d pairs to %s; fill human_label with 1/0 and run: rated build-bench audit --labels %s\n", len(sample), csvPath, csvPath)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "output directory of a build-bench run")
	cmd.Flags().StringVar(&csvPath, "out-csv", "", "CSV to write the sample to")
	cmd.Flags().StringVar(&labels, "labels", "", "labelled CSV to score")
	cmd.Flags().StringVar(&catalogPath, "catalog", "", "catalog for tool names (default <dir>/real/catalog.jsonl)")
	cmd.Flags().StringVar(&tag, "tag", "", "settings tag of the verdicts to sample (default: the one <dir>/stats.json was built with; \"\" for journals written before settings were part of the key)")
	cmd.Flags().IntVar(&n, "n", 200, "pairs to sample (the paper: 200)")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "sampling seed")
	cmd.Flags().Float64Var(&keep, "keep-score", 0.85, "validator keep threshold")
	return cmd
}

// builtRealTag is the settings tag of the Real verdicts the build in dir used: stats.json's,
// else the journal's only one. A journal shared by runs under other settings (another model,
// seed or temperature) holds their verdicts too, which an audit of this build must not sample.
func builtRealTag(dir, journalPath string, recs []synth.Record) (string, error) {
	statsPath := filepath.Join(dir, "stats.json")
	if raw, err := os.ReadFile(statsPath); err == nil {
		var st struct {
			Run struct {
				Real *struct{ JournalTag string } `json:"real_config"`
			} `json:"run"`
		}
		if err := json.Unmarshal(raw, &st); err != nil {
			return "", fmt.Errorf("%s: %w", statsPath, err)
		}
		if st.Run.Real != nil {
			return st.Run.Real.JournalTag, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	count := map[string]int{}
	for _, r := range recs {
		if t, ok := synth.RealTag(r.Key); ok {
			count[t]++
		}
	}
	if len(count) > 1 {
		var parts []string
		for _, t := range slices.Sorted(maps.Keys(count)) {
			parts = append(parts, fmt.Sprintf("%q (%d records)", t, count[t]))
		}
		return "", fmt.Errorf("%s holds Real verdicts under %d settings tags, %s, and %s records none: pass --tag", journalPath, len(count), strings.Join(parts, ", "), statsPath)
	}
	for t := range count {
		return t, nil
	}
	return "", nil
}

// readRealQueries reads the ToolBench queries from path, or the embedded copy when path is "".
func readRealQueries(path string) ([]synth.RealQuery, error) {
	if path == "" {
		return synth.ParseRealQueries(data.ToolBenchQueriesName, data.ToolBenchQueries)
	}
	return synth.ReadRealQueries(path)
}

// realQueriesName is what outputs record as the source of the real queries.
func realQueriesName(path string) string {
	if path == "" {
		return data.ToolBenchQueriesName + " (embedded)"
	}
	return path
}
