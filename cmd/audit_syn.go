package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/rated-dev/rated/internal/progress"
	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/synth"
)

// newAuditSynCmd is `rated build-bench audit-syn`: a sample of generated EcoAgent-Syn queries with
// their intended tools, judged by a second model (the validator prompt of --judge-config), to a CSV
// a person labels; given the CSV back, the judge's and the person's precision and their agreement.
func newAuditSynCmd() *cobra.Command {
	var dir, csvPath, labels, judgeConfig, rankRetriever, rankCatalog string
	var n, judgeFirst int
	var enc encodingFlags
	var seed uint64
	var keep float64
	cmd := &cobra.Command{
		Use:   "audit-syn",
		Short: "Sample generated Syn queries, judge whether their intended tool is right, and score a person's labels",
		Long: `With --dir and --out-csv: samples --n queries of <dir>/syn (all splits, uniformly, --seed) with
the tool each was generated for; with --judge-config, the model of that LLM configuration scores
each pair with the validator prompt (journaled in <dir>/audit/judge-<model>.jsonl, so an
interrupted judgement resumes), and judge_keep is 1 when the score is at least --keep-score.
A person fills human_label with 1 (the tool is right for the query) or 0.
With --rank-retriever, each query's intended tool is also ranked under that retriever over
--rank-catalog (the whole catalog): a model-free second check (retriever_rank).
With --labels: prints the judge's and the person's precision, their agreement, the retriever's
top-1/top-5 shares, the length distribution and the share of distinct queries as JSON.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			w := c.OutOrStdout()
			if labels != "" {
				s, err := synth.ReadSynAudit(labels)
				return printJSON(w, s, err)
			}
			if dir == "" || csvPath == "" {
				return fmt.Errorf("give --dir and --out-csv to sample, or --labels to score")
			}
			b, err := bench.ReadDir(filepath.Join(dir, "syn"))
			if err != nil {
				return err
			}
			items, err := synth.SampleSynAudit(b, n, rand.New(rand.NewPCG(seed, 0x5a0d17)))
			if err != nil {
				return err
			}
			if rankRetriever != "" {
				if err := rankSynAudit(c, items, rankRetriever, rankCatalog, b, enc); err != nil {
					return err
				}
			}
			if judgeConfig != "" {
				lc, err := synth.LoadLLMConfig(judgeConfig, nil)
				if err != nil {
					return err
				}
				client, err := synth.NewClient(lc.ClientConfig(), &http.Client{})
				if err != nil {
					return err
				}
				if err := os.MkdirAll(filepath.Join(dir, "audit"), 0o755); err != nil {
					return err
				}
				j, err := synth.OpenJournal(filepath.Join(dir, "audit", "judge-"+lc.Model+".jsonl"))
				if err != nil {
					return err
				}
				defer j.Close()
				cfg := synth.DefaultRealConfig()
				cfg.Seed, cfg.Concurrency, cfg.PromptStyle, cfg.KeepScore = lc.Seed, lc.Concurrency, lc.PromptStyle, keep
				ctx := c.Context() // cancelled by SIGINT/SIGTERM (Execute's one signal handler)
				judged := items
				if judgeFirst > 0 && judgeFirst < len(items) {
					judged = items[:judgeFirst]
				}
				if err := synth.JudgeSynAudit(ctx, client, judged, b.CorpusTools(), cfg, j, progress.ForWriter(c.ErrOrStderr(), time.Now), time.Now); err != nil {
					return err
				}
			}
			if err := synth.WriteSynAuditCSV(csvPath, items, b.CorpusTools(), keep); err != nil {
				return err
			}
			fmt.Fprintf(w, "wrote %d queries to %s; fill human_label with 1/0 and run: rated build-bench audit-syn --labels %s\n", len(items), csvPath, csvPath)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "output directory of a build-bench run")
	cmd.Flags().StringVar(&csvPath, "out-csv", "", "CSV to write the sample to")
	cmd.Flags().StringVar(&labels, "labels", "", "labelled CSV to score")
	cmd.Flags().StringVar(&judgeConfig, "judge-config", "", "LLM configuration of the judge (empty: no judge)")
	cmd.Flags().IntVar(&n, "n", 200, "queries to sample")
	cmd.Flags().IntVar(&judgeFirst, "judge-first", 0, "judge only the first N sampled queries (in CSV order; 0: all)")
	cmd.Flags().StringVar(&rankRetriever, "rank-retriever", "", "also rank each query's intended tool under this retriever (bm25, dense:<model>) over --rank-catalog")
	cmd.Flags().StringVar(&rankCatalog, "rank-catalog", "", "catalog the retriever ranks (default: <dir>/syn's corpus)")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "sampling seed")
	cmd.Flags().Float64Var(&keep, "keep-score", 0.85, "judge score at or above which the intended tool counts as right")
	enc.register(cmd.Flags())
	return cmd
}

// printJSON prints v as indented JSON, unless err (from producing v) is not nil.
func printJSON(w io.Writer, v any, err error) error {
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// rankSynAudit fills each item's retriever rank under spec over the tools of catalogPath (default
// the audited benchmark's corpus).
func rankSynAudit(c *cobra.Command, items []synth.SynAuditItem, spec, catalogPath string, b *bench.Bench, enc encodingFlags) error {
	tools := b.CorpusTools()
	if catalogPath != "" {
		var err error
		if tools, err = catalog.ReadJSONL(catalogPath); err != nil {
			return err
		}
	}
	h, err := assetHome(c)
	if err != nil {
		return err
	}
	ret, err := openBenchRetriever(c.Context(), spec, h, enc, bench.DocsFromTools(tools), progress.New(c.ErrOrStderr(), false, time.Now))
	if err != nil {
		return err
	}
	defer ret.close()
	return synth.RankSynAudit(ret, items)
}
