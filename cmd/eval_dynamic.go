package cmd

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/rated-dev/rated/internal/outdir"
	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/decisionlog"
	"github.com/rated-dev/rated/pkg/defaultbench"
	"github.com/rated-dev/rated/pkg/evaldynamic"
)

func newEvalDynamicCmd() *cobra.Command {
	v := viper.New()
	var configFiles []string
	var benchDir, outDir string
	var workers int
	var enc encodingFlags
	var sweep bool
	var decisionLog string
	cmd := &cobra.Command{
		Use:   "dynamic",
		Short: "Table 2: failure injection, every selection policy (Post-Fail SR, FSR, adaptation steps)",
		Long: `Runs the paper's dynamic experiment: a frozen retriever proposes the top-K tools, each policy
picks, the picked tool executes or fails, and only its outcome is observed. Every policy runs
under every scenario for every seed; results go to OUT/table2.{md,csv,json,tex}, OUT/config.yaml,
OUT/runs.jsonl and OUT/sr-<scenario>.png, with OUT/paired.* when dynamic.compare names policies
(paired tests over seeds) and OUT/bounds.* when the policies include oracle_fallback rows (the
Lagrangian bound of each class at every policy's attempts per step and at dynamic.bound_attempts;
configs/fallback-frontier.yaml).

With --sweep it tunes instead: the configuration's sweep section names a policy, the spec keys
to vary and the criterion; every combination runs on the (non-test) split, and OUT gets
sweep.{md,csv,json}, chosen.yaml and one plot per parameter (examples: configs/sweep-reliability.yaml,
configs/sweep-relevance.yaml, configs/sweep-prototypes.yaml).

Configuration: the embedded configs/paper.yaml, then each --config file merged on top, then
RATED_* environment variables (e.g. RATED_DYNAMIC_STEPS), then flags. --steps alone scales the
failure onset, the summary window and the AS window with it (--steps 1000: onset 200, summary
[200, 500)); with other timeline keys set too, nothing is scaled and a timeline that does not fit
is refused naming the keys.

Retrieval: the dense encoder of --encoder (an installed model folder name, a folder path, or
openai:URL[#MODEL]; default the first installed in the asset home). A missing encoder is an
error naming the home and "rated setup models"; --retriever bm25 asks for the lexical baseline.
config.yaml and table2.json record the retriever, the encoder's file digests, and rated's version
and commit.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := evaldynamic.LoadConfig(v, configFiles)
			if err != nil {
				return err
			}
			if workers < 0 {
				return fmt.Errorf("--workers %d: must be >= 0 (0: GOMAXPROCS)", workers)
			}
			if sweep {
				if cfg.Sweep == nil {
					return fmt.Errorf("--sweep: the configuration has no sweep section (see configs/sweep-reliability.yaml, configs/sweep-relevance.yaml or configs/sweep-prototypes.yaml)")
				}
				if decisionLog != "" {
					return fmt.Errorf("--decision-log with --sweep: a sweep writes no decision log (run eval dynamic without --sweep, with the chosen.yaml it wrote, to log the chosen setting)")
				}
				if err := cfg.CheckSweep(); err != nil {
					return err
				}
			} else if err := cfg.CheckFileNames(decisionLog != ""); err != nil {
				return err
			}
			if decisionLog != "" {
				if err := refuseInside(outDir, "decision-log", decisionLog); err != nil {
					return err
				}
				// eval dynamic does not resume: the logs of an earlier run would be appended to
				// (eval replay then refuses decision ids that appear twice, or pools two runs).
				earlier, err := decisionlog.FilesIn(decisionLog)
				if err != nil {
					return fmt.Errorf("--decision-log %s: %w", decisionLog, err)
				}
				if len(earlier) > 0 {
					names := make([]string, 0, 3)
					for _, f := range earlier[:min(3, len(earlier))] {
						names = append(names, filepath.Base(f))
					}
					if len(earlier) > 3 {
						names = append(names, "…")
					}
					return fmt.Errorf("--decision-log %s already holds the decision-log files of an earlier run (%s; %d *.jsonl in all): this run would append to them and eval replay would mix the two runs; choose a new directory (or remove those files)",
						decisionLog, strings.Join(names, ", "), len(earlier))
				}
			}
			if err := refuseInputsInside(outDir, benchDir, "--config", configFiles...); err != nil {
				return err
			}
			set, err := outdir.Begin(outDir, evalDynamicOutput())
			if err != nil {
				return err
			}
			defer set.Abort()
			// The decision log is written in place, beside the set: a run that does not
			// commit (an error, SIGINT) takes its files away with the set, which the check above
			// makes safe (the directory held no *.jsonl), so that the same command can run again.
			committed := false
			if decisionLog != "" {
				_, statErr := os.Stat(decisionLog)
				created := errors.Is(statErr, fs.ErrNotExist)
				defer func() {
					if !committed {
						removeDecisionLog(decisionLog, created, cmd.ErrOrStderr())
					}
				}()
			}
			b, name, err := loadBench(benchDir)
			if err != nil {
				return err
			}
			// The split and the calibration split, before the catalog is encoded (seconds to minutes).
			if err := evaldynamic.CheckBench(b, name, cfg); err != nil {
				return err
			}
			for _, w := range b.Warnings {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s: %s\n", name, w)
			}
			if !sweep {
				for _, w := range cfg.Warnings() {
					fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", w)
				}
			}
			h, err := assetHome(cmd)
			if err != nil {
				return err
			}
			log := cmd.ErrOrStderr()
			d := cfg.Dynamic
			fmt.Fprintf(log, "timeline: %d steps, failure onset at %s, summary over [%d, %d), AS window %d\n",
				d.Steps, cfg.Onsets(), d.SummaryFrom, d.SummaryTo, d.ASWindow)
			src, models, err := enc.sharedEncoders(h)
			if err != nil {
				return err
			}
			defer models.Close()
			res, closeRes, err := evaldynamic.ResolveResources(cmd.Context(), b, name, cfg, src, log,
				newProgress(log, "encode catalog"))
			if err != nil {
				return err
			}
			defer closeRes()
			start := time.Now()
			if sweep {
				res, err := evaldynamic.Sweep(cmd.Context(), cfg, res, evaldynamic.Options{
					OutDir: set.Dir(), Workers: workers, Now: time.Now,
					Progress:   newProgress(cmd.ErrOrStderr(), "eval dynamic --sweep"),
					Provenance: runRecord(h),
				})
				if err != nil {
					return err
				}
				if err := set.Commit(); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "chosen: %s (mean SR %.1f%%; %d violations)\ncriterion: %s\nwrote %s/sweep.{md,csv,json}, chosen.yaml and plots in %.1fs\n",
					res.Chosen.Policy, 100*res.Chosen.MeanSR, len(res.Chosen.Violations), res.Criterion, outDir, time.Since(start).Seconds())
				return nil
			}
			out, err := evaldynamic.Run(cmd.Context(), cfg, res, evaldynamic.Options{
				OutDir: set.Dir(), Workers: workers, Now: time.Now, DecisionLog: decisionLog,
				Progress:   newProgress(log, "eval dynamic"),
				Provenance: runRecord(h),
			})
			if err != nil {
				return err
			}
			if err := set.Commit(); err != nil {
				return err
			}
			committed = true
			fmt.Fprintln(cmd.OutOrStdout(), out.Table.Markdown())
			extra := ""
			if len(out.Bounds) > 0 {
				fmt.Fprintln(cmd.OutOrStdout(), evaldynamic.BoundTable(out.Bounds).Markdown())
				extra = ", bounds.{md,csv,json,tex}"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s/table2.{md,csv,json,tex}%s, config.yaml, runs.jsonl and plots in %.1fs\n", outDir, extra, time.Since(start).Seconds())
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&configFiles, "config", nil, "YAML file merged over the embedded configs/paper.yaml (repeatable)")
	f.StringVar(&benchDir, "bench", "", "benchmark directory in the BEIR layout (default: the embedded default benchmark)")
	f.StringVar(&outDir, "out", "runs/dynamic", "output directory")
	enc.register(f)
	f.IntVar(&workers, "workers", 0, "parallel runs (default: GOMAXPROCS)")
	f.StringVar(&decisionLog, "decision-log", "", "also write every run's decisions and outcomes to this directory (outside --out, holding no *.jsonl yet), in rated serve's decision-log format (docs/DECISION-LOG.md)")
	f.BoolVar(&sweep, "sweep", false, "tune the policy of the configuration's sweep section on a non-test split instead of writing Table 2")
	f.Int("steps", 0, "override dynamic.steps; the config files' timeline (onset, events, summary and AS windows) scales with it, the policies' step-valued settings do not")
	f.UintSlice("seeds", nil, "override dynamic.seeds")
	f.Int("k", 0, "override retrieval.k")
	f.String("split", "", "override dynamic.split")
	f.String("retriever", "", "override retrieval.retriever: dense (auto is the same) or bm25")
	f.String("encoder", "", "override retrieval.encoder: an installed model folder name, a folder path, or openai:URL[#MODEL]")
	bindIfSet(v, cmd, map[string]string{"steps": "dynamic.steps", "seeds": "dynamic.seeds", "k": "retrieval.k",
		"split": "dynamic.split", "retriever": "retrieval.retriever", "encoder": "retrieval.encoder"})
	return cmd
}

// bindIfSet binds flags to config keys so that a flag overrides the files only when given.
func bindIfSet(v *viper.Viper, cmd *cobra.Command, keys map[string]string) {
	for flag, key := range keys {
		v.BindPFlag(key, cmd.Flags().Lookup(flag))
	}
}

// loadBench reads a BEIR benchmark directory, or the embedded default when dir is empty.
func loadBench(dir string) (*bench.Bench, string, error) {
	if dir == "" {
		b, err := defaultbench.Load()
		return b, "embedded default", err
	}
	b, err := bench.ReadDir(dir)
	return b, dir, err
}

// removeDecisionLog removes the decision-log files of a run that did not commit, and dir itself
// when the run created it (and it is empty then); what fails is said on log.
func removeDecisionLog(dir string, created bool, log io.Writer) {
	files, err := decisionlog.FilesIn(dir)
	for _, f := range files {
		err = errors.Join(err, os.Remove(f))
	}
	if created {
		if rerr := os.Remove(dir); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
	}
	if err != nil {
		fmt.Fprintf(log, "rated: the unfinished decision log in %s was not removed whole: %v\n", dir, err)
	}
}
