package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/defaultbench"
	"github.com/rated-dev/rated/pkg/retrieve"
	"github.com/rated-dev/rated/pkg/synth"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

type buildBenchFlags struct {
	catalog, out, config, realQueries, retriever, digestFile string
	tools, perPlatform, realLimit, topK                      int
	platforms                                                []string
	sampleSeed, splitSeed, negSeed                           uint64
	seed                                                     int64
	concurrency, hard, random                                int
	minScore, keepScore                                      float64
	noSyn, noReal                                            bool
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
stats.json and DATASHEET.md. Every finished request is journaled under --out/journal, so an
interrupted run (even kill -9) resumes where it stopped when rerun with the same flags.
The LLM server must be running: rated llm up.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runBuildBench(c, f, syn, real)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.catalog, "catalog", "", "catalog JSONL (default: the embedded default benchmark's catalog)")
	fl.StringVar(&f.out, "out", "", "output directory (required)")
	fl.StringVar(&f.config, "config", "", "LLM configuration (default <repo>/configs/llm.yaml)")
	fl.StringVar(&f.digestFile, "model-file", "", "weights file whose sha256 is recorded (default $RATED_ASSETS/<gguf of the config>)")
	fl.IntVar(&f.tools, "tools", 0, "use at most this many tools (0: all)")
	fl.StringSliceVar(&f.platforms, "platforms", nil, "use only these platforms (comma-separated; default all)")
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
	fl.StringVar(&f.retriever, "retriever", "bm25", "retriever for hard negatives and Real candidates (bm25)")
	fl.StringVar(&f.realQueries, "real-queries", filepath.Join("..", "shared", "data", "toolbench", "queries.jsonl"), "ToolBench queries for EcoAgent-Real")
	fl.IntVar(&f.realLimit, "real-limit", 0, "use the first N real queries (0: all)")
	fl.IntVar(&f.topK, "top-k", real.TopK, "candidate tools per real query")
	fl.Float64Var(&f.minScore, "min-retrieval-score", real.MinRetrievalScore, "drop Real candidates scoring below this under the retriever")
	fl.Float64Var(&f.keepScore, "keep-score", real.KeepScore, "keep Real pairs the validator scores at least this")
	fl.BoolVar(&f.noSyn, "no-syn", false, "skip EcoAgent-Syn")
	fl.BoolVar(&f.noReal, "no-real", false, "skip EcoAgent-Real")
	_ = cmd.MarkFlagRequired("out")
	cmd.AddCommand(newAuditCmd())
	return cmd
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

func newRetriever(name string, docs []bench.Doc) (retrieve.Retriever, error) {
	switch strings.ToLower(name) {
	case "bm25":
		return retrieve.NewBM25(docs, retrieve.DefaultBM25Params()), nil
	}
	return nil, fmt.Errorf("unknown retriever %q (available: bm25)", name)
}

func runBuildBench(c *cobra.Command, f buildBenchFlags, syn synth.SynConfig, real synth.RealConfig) error {
	ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	started := time.Now()
	root, _ := repoRoot("")
	if f.config == "" {
		if root == "" {
			return fmt.Errorf("no configs/llm.yaml found; pass --config")
		}
		f.config = filepath.Join(root, "configs", "llm.yaml")
	}
	lc, err := synth.LoadLLMConfig(f.config, nil)
	if err != nil {
		return err
	}
	if f.seed != 0 {
		lc.Seed = f.seed
	}
	if f.concurrency > 0 {
		lc.Concurrency = f.concurrency
	}
	all, catPath, err := loadCatalog(f.catalog)
	if err != nil {
		return err
	}
	tools := synth.SampleTools(all, f.tools, f.platforms, f.perPlatform, f.sampleSeed)
	if len(tools) == 0 {
		return fmt.Errorf("no tools left after sampling %s (--tools %d, --platforms %v)", catPath, f.tools, f.platforms)
	}
	ret, err := newRetriever(f.retriever, bench.DocsFromTools(tools))
	if err != nil {
		return err
	}
	client, err := synth.NewClient(lc.ClientConfig(), &http.Client{})
	if err != nil {
		return err
	}
	digest, digestSrc := lc.GGUFSHA256, "declared in "+f.config
	if f.digestFile == "" && root != "" && lc.GGUF != "" {
		f.digestFile = filepath.Join(assetsDir(root), lc.GGUF)
	}
	if f.digestFile != "" {
		if d, err := synth.FileSHA256(f.digestFile); err == nil {
			digest, digestSrc = d, "sha256 of "+f.digestFile
			if lc.GGUFSHA256 != "" && d != lc.GGUFSHA256 {
				return fmt.Errorf("%s has sha256 %s, but %s declares %s", f.digestFile, d, f.config, lc.GGUFSHA256)
			}
		}
	}
	if err := os.MkdirAll(filepath.Join(f.out, "journal"), 0o755); err != nil {
		return err
	}
	syn.Seed, syn.Concurrency = lc.Seed, lc.Concurrency
	syn.Negatives.Hard, syn.Negatives.Random = f.hard, f.random
	syn.SplitSeed, syn.NegativeSeed = f.splitSeed, f.negSeed
	real.Seed, real.Concurrency = lc.Seed, lc.Concurrency
	real.TopK, real.MinRetrievalScore, real.KeepScore, real.SplitSeed = f.topK, f.minScore, f.keepScore, f.splitSeed+4
	real.DedupeThreshold = syn.DedupeThreshold
	errw := c.ErrOrStderr()
	tty := false
	if fd, ok := errw.(*os.File); ok {
		tty = term.IsTerminal(int(fd.Fd()))
	}
	prog := synth.NewProgress(errw, tty, time.Now)
	info := synth.RunInfo{
		Tool: "rated build-bench", StartedAt: started, CatalogPath: catPath, CatalogSize: len(all),
		ToolsUsed: len(tools), SampleSeed: f.sampleSeed, Model: lc.Model, BaseURL: lc.ResolvedBaseURL(),
		ModelDigest: digest, DigestSource: digestSrc, Temperature: lc.Temperature, MaxTokens: lc.MaxTokens,
		Retriever: ret.Name(),
	}
	out := synth.Output{Info: info}
	interrupted := func(err error) error {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted; finished requests are journaled under %s, rerun the same command to resume", filepath.Join(f.out, "journal"))
		}
		return err
	}
	if !f.noSyn {
		j, err := synth.OpenJournal(filepath.Join(f.out, "journal", "syn.jsonl"))
		if err != nil {
			return err
		}
		defer j.Close()
		if j.Dropped > 0 {
			fmt.Fprintf(errw, "syn: dropped a torn last journal line (%d bytes) left by an interrupted run\n", j.Dropped)
		}
		if err := synth.GenerateSyn(ctx, client, tools, syn, j, prog, time.Now); err != nil {
			return interrupted(err)
		}
		res, err := synth.AssembleSyn(tools, j, ret, syn)
		if err != nil {
			return err
		}
		out.Syn, out.Info.Syn = res, &syn
	}
	if !f.noReal {
		queries, err := synth.ReadRealQueries(f.realQueries)
		if err != nil {
			return err
		}
		if f.realLimit > 0 && len(queries) > f.realLimit {
			queries = queries[:f.realLimit]
		}
		pairs, err := synth.RealCandidates(ret, queries, tools, real.TopK)
		if err != nil {
			return err
		}
		j, err := synth.OpenJournal(filepath.Join(f.out, "journal", "real.jsonl"))
		if err != nil {
			return err
		}
		defer j.Close()
		if err := synth.ValidateReal(ctx, client, pairs, tools, real, j, prog, time.Now); err != nil {
			return interrupted(err)
		}
		res, err := synth.AssembleReal(tools, queries, pairs, j, ret.Name(), real)
		if err != nil {
			return err
		}
		out.Real, out.Info.Real, out.Info.RealQueries = res, &real, f.realQueries
	}
	out.Info.FinishedAt = time.Now()
	if err := out.Write(f.out); err != nil {
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
		fmt.Fprintf(w, "real: %d queries, %d candidate pairs, %d below retrieval threshold, %d validated (%d failed), %d kept; %d queries, %d verified pairs, splits %v\n",
			s.InputQueries, s.CandidatePairs, s.DroppedLowScore, s.ValidatedPairs, s.ValidationFailed, s.KeptPairsRaw, s.Queries, s.VerifiedPairs, s.QueriesPerSplit)
	}
	fmt.Fprintf(w, "wrote %s (model %s, sha256 %s)\n", f.out, lc.Model, digest)
	return nil
}

// newAuditCmd is `rated build-bench audit`: a stratified sample of validated Real pairs to a CSV
// for a person to label, and, given the labelled CSV back, the agreement with the validator.
func newAuditCmd() *cobra.Command {
	var dir, csvPath, labels, catalogPath string
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
				if err != nil {
					return err
				}
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(a)
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
			sample := synth.SampleAudit(j.Records(), n, rand.New(rand.NewPCG(seed, 0xa0d17)))
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
	cmd.Flags().IntVar(&n, "n", 200, "pairs to sample (the paper: 200)")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "sampling seed")
	cmd.Flags().Float64Var(&keep, "keep-score", 0.85, "validator keep threshold")
	return cmd
}
