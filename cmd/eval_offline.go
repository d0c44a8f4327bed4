package cmd

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rated-dev/rated/internal/outdir"
	"github.com/rated-dev/rated/pkg/evaloffline"
	"github.com/rated-dev/rated/pkg/home"
	"github.com/rated-dev/rated/pkg/llmrerank"
	"github.com/rated-dev/rated/pkg/metrics"
	"github.com/rated-dev/rated/pkg/synth"
)

// offlineRegistry is every retriever eval offline and reproduce know: the lexical baselines, the
// dense:, sparse:, rated-*: and rrf: families, and llm-rerank: when rerank is set. The ONNX
// Runtime library is loaded, and the LLM asked, only when a retriever that needs them is built.
func offlineRegistry(rerank *rerankFlags, h home.Home) (*evaloffline.Registry, error) {
	reg := evaloffline.NewLexicalRegistry()
	for _, register := range []func(*evaloffline.Registry) error{evaloffline.RegisterDense, evaloffline.RegisterSparse, evaloffline.RegisterRATED, evaloffline.RegisterFusion} {
		if err := register(reg); err != nil {
			return nil, err
		}
	}
	if rerank != nil {
		if err := rerank.register(reg, h); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

// rerankFlags configure the llm-rerank: retrievers.
type rerankFlags struct {
	config, endpoint  string
	depth, concurrent int
}

func (r *rerankFlags) registerFlags(f *pflag.FlagSet) {
	f.StringVar(&r.config, "rerank-config", "", "LLM configuration of the llm-rerank: retrievers (endpoint, model, timeouts, retries; default: configs/"+RerankGenerator+", embedded: the EcoAgent generator, started with rated llm up --config on that file)")
	f.StringVar(&r.endpoint, "rerank-llm", "", "OpenAI-compatible endpoint and model of the llm-rerank: retrievers, URL#MODEL (default: the configuration's)")
	f.IntVar(&r.depth, "rerank-depth", llmrerank.DefaultConfig().Depth, "first-stage candidates the LLM reranks")
	f.IntVar(&r.concurrent, "rerank-concurrency", 1, "LLM requests in flight at once (the server's parallel slots)")
}

// register adds llm-rerank: with the client the flags describe; answers are journalled under
// <home>/cache/rerank/<model>.jsonl.
func (r *rerankFlags) register(reg *evaloffline.Registry, h home.Home) error {
	lc, _, err := loadCandidateConfig(r.config, RerankGenerator)
	if err != nil {
		return fmt.Errorf("--rerank-config: %w", err)
	}
	cc := lc.ClientConfig()
	if r.endpoint != "" {
		url, model, ok := strings.Cut(r.endpoint, "#")
		if !ok || url == "" || model == "" || !strings.HasPrefix(url, "http") {
			return fmt.Errorf("--rerank-llm %q: want URL#MODEL, e.g. http://127.0.0.1:18436/v1#qwen2.5-coder-1.5b", r.endpoint)
		}
		cc.BaseURL, cc.Model = url, model
	}
	// A ranking must not depend on sampling.
	cc.Temperature = 0
	gen, err := synth.NewClient(cc, &http.Client{})
	if err != nil {
		return err
	}
	cfg := llmrerank.DefaultConfig()
	cfg.Depth, cfg.Concurrency, cfg.MaxTokens = r.depth, r.concurrent, max(cfg.MaxTokens, 8*r.depth)
	safe := strings.Map(func(c rune) rune {
		if c == '/' || c == ':' || c == ' ' || c == '\\' {
			return '_'
		}
		return c
	}, cc.Model)
	return evaloffline.RegisterLLMRerank(reg, gen, h.Path("cache", "rerank", safe+".jsonl"), cfg)
}

// newEvalOfflineCmd builds `rated eval offline`: Table 1 (pkg/evaloffline).
func newEvalOfflineCmd() *cobra.Command {
	def := evaloffline.DefaultConfig()
	var (
		benchDir, outDir, split, baseline string
		retrievers, measures              []string
		depth, rounds                     int
		seed                              uint64
		list                              bool
		enc                               encodingFlags
		rerank                            rerankFlags
		sample                            int
	)
	var defMeasures []string
	for _, m := range def.Measures {
		defMeasures = append(defMeasures, m.String())
	}
	cmd := &cobra.Command{
		Use:   "offline [--bench DIR] --out OUT",
		Short: "Table 1: offline retrieval quality (MRR, Recall@k, Hit@k, nDCG@10) of every retriever",
		Long: `Evaluates every retriever of --retrievers on one split of a benchmark in the BEIR layout
(corpus.jsonl, queries.jsonl, qrels/<split>.tsv; the embedded default benchmark when --bench is not
given), with paired significance tests (Student's t and a sign-flip randomisation test) against
--baseline.

Queries evaluated: those of qrels/<split>.tsv with at least one relevant tool (grade > 0); queries
whose qrels list no relevant tool are counted in the table notes but not evaluated. A query for
which a retriever returns nothing scores 0 (as trec_eval -c). Recall@k is the fraction of the
relevant tools in the top k; Hit@k is 1 when any relevant tool is in the top k.

Writes OUT/table1.{md,csv,json,tex}, OUT/per_query.csv, OUT/runs/<retriever>.trec and
OUT/qrels.<split>.trec, so trec_eval, pytrec_eval, ir_measures or ranx can recompute every number.
table1.json records rated's version and commit, the asset home and, per dense retriever, the
encoder's file digests. Dense retrievers name an installed model folder, a folder path, or an
OpenAI-compatible endpoint: dense:openai:http://127.0.0.1:8080/v1#MODEL.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, err := assetHome(cmd)
			if err != nil {
				return err
			}
			reg, err := offlineRegistry(&rerank, h)
			if err != nil {
				return err
			}
			if list {
				fmt.Fprintln(cmd.OutOrStdout(), strings.Join(reg.Names(), "\n"))
				return nil
			}
			if outDir == "" {
				return fmt.Errorf("eval offline: --out is required")
			}
			cfg := evaloffline.Config{Split: split, Retrievers: evaloffline.JoinParameters(retrievers), Baseline: baseline, Depth: depth, Rounds: rounds, Seed: seed, Sample: sample}
			for _, s := range measures {
				m, err := metrics.ParseMeasure(s)
				if err != nil {
					return fmt.Errorf("eval offline: --measures: %w", err)
				}
				cfg.Measures = append(cfg.Measures, m)
			}
			if err := cfg.Check(); err != nil {
				return fmt.Errorf("eval offline: %w", err)
			}
			if err := refuseInputsInside(outDir, benchDir, ""); err != nil {
				return fmt.Errorf("eval offline: %w", err)
			}
			set, err := outdir.Begin(outDir, evalOfflineOutput())
			if err != nil {
				return fmt.Errorf("eval offline: %w", err)
			}
			defer set.Abort()
			b, name, err := loadBench(benchDir)
			if err != nil {
				return fmt.Errorf("eval offline: %w", err)
			}
			log := cmd.ErrOrStderr()
			for _, w := range b.Warnings {
				fmt.Fprintf(log, "warning: %s: %s\n", name, w)
			}
			// Each model folder is opened once and shared by the dense: and rated-* retrievers naming it.
			src, models, err := enc.sharedEncoders(h)
			if err != nil {
				return fmt.Errorf("eval offline: %w", err)
			}
			defer models.Close()
			env := evaloffline.Env{Ctx: cmd.Context(), Bench: b, Log: log, Progress: newProgress(log, "eval offline"), Encoders: src}
			res, err := evaloffline.Run(env, name, reg, cfg)
			if err != nil {
				return fmt.Errorf("eval offline: %w", err)
			}
			res.Provenance = runRecord(h)
			if err := evaloffline.WriteOutputs(set.Dir(), res); err != nil {
				return fmt.Errorf("eval offline: %w", err)
			}
			if err := set.Commit(); err != nil {
				return fmt.Errorf("eval offline: %w", err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), evaloffline.Table(res).Markdown())
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s/table1.{md,csv,json,tex}, per_query.csv, %s and runs/\n", outDir, evaloffline.QrelsFileName(split))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&benchDir, "bench", "", "benchmark directory in the BEIR layout (default: the embedded default benchmark)")
	f.StringVar(&outDir, "out", "", "output directory (required)")
	f.StringVar(&split, "split", def.Split, "qrels split to evaluate (qrels/<split>.tsv)")
	f.StringSliceVar(&retrievers, "retrievers", def.Retrievers, "retrievers to evaluate, in table order, e.g. tfidf,bm25,dense:bge-small-en-v1.5 (see --list)")
	f.StringVar(&baseline, "baseline", def.Baseline, `retriever the others are tested against ("" for no tests)`)
	f.IntVar(&depth, "depth", def.Depth, "tools retrieved per query (run depth; MRR is computed within it)")
	f.StringSliceVar(&measures, "measures", defMeasures, "measures, in column order: MRR, MRR@k, Recall@k, Hit@k, nDCG@k, MAP, MAP@k, P@k (ir_measures names RR, R@k, Success@k, AP too)")
	f.IntVar(&rounds, "rounds", def.Rounds, "sign assignments of the randomisation test")
	f.Uint64Var(&seed, "seed", def.Seed, "seed of the randomisation test")
	enc.register(f)
	rerank.registerFlags(f)
	f.IntVar(&sample, "sample", 0, "evaluate a seeded sample of this many of the split's queries (0: all), e.g. for the costly llm-rerank: rows")
	f.BoolVar(&list, "list", false, "list the available retrievers and exit")
	return cmd
}
