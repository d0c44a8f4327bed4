package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rated-dev/rated/internal/atomicfile"
	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/decisionlog"
	"github.com/rated-dev/rated/pkg/ope"
	"github.com/rated-dev/rated/pkg/provenance"
)

// newEvalReplayCmd builds `rated eval replay`: off-policy evaluation on decision logs (pkg/ope).
func newEvalReplayCmd() *cobra.Command {
	var (
		logs, policies            []string
		catalogPath, reward, out  string
		prefix                    string
		seed                      uint64
		folds                     int
		semantic, banditW, priorW float64
	)
	cmd := &cobra.Command{
		Use:   "replay --log LOG... --policies SPEC...",
		Short: "Off-policy evaluation of policies on decision logs: replay, IPS, SNIPS and doubly robust, with 95% intervals",
		Long: `Estimates what each target policy would have achieved on the traffic of a decision log (rated
serve --decision-log, or rated eval dynamic --decision-log): the mean reward of its first choice
per request, by replay (rejection sampling), inverse propensity scoring (IPS), self-normalised IPS
and doubly robust (with its direct-method part), each with a 95% confidence interval.

--log takes decision-log files or directories (every *.jsonl of a directory, or those of
--prefix; several replicas' logs together: decisions and outcomes are joined by id). --policies
takes "recommended", or YAML files holding one pkg/bandit spec, a list of them, or a
configuration with a policies: list (configs/paper.yaml; its simulator oracles are skipped).

Which estimator to trust depends on the log (docs/OPE.md): only a logging policy that explores
(spec explore: epsilon_greedy or softmax; batch_grpo) gives every candidate a positive propensity.
On a log of a deterministic policy (propensity 1 on its choice, the default) IPS, SNIPS and replay
only see the decisions where the target chooses as the log did; the table warns and counts the
unsupported decisions.

Prints a Markdown table; --out DIR also writes DIR/replay.md and DIR/replay.json.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(logs) == 0 || len(policies) == 0 {
				return fmt.Errorf("--log and --policies are required")
			}
			if err := checkReplayFlags(folds, semantic, banditW, priorW); err != nil {
				return fmt.Errorf("eval replay: %w", err)
			}
			if err := ope.CheckReward(reward); err != nil {
				return fmt.Errorf("eval replay: --%w", err)
			}
			if out != "" {
				if err := atomicfile.CheckDir(out); err != nil {
					return fmt.Errorf("eval replay: --out %w", err)
				}
			}
			var specs []bandit.Spec
			for _, p := range policies {
				s, skipped, err := ope.LoadSpecs(p)
				if err != nil {
					return err
				}
				if len(skipped) > 0 {
					fmt.Fprintf(cmd.ErrOrStderr(), "eval replay: %s: skipping the simulator oracles %s (they cannot run on a log)\n", p, strings.Join(skipped, ", "))
				}
				specs = append(specs, s...)
			}
			files, err := logFiles(logs, prefix)
			if err != nil {
				return err
			}
			opts := ope.ReadOptions{Reward: reward}
			if catalogPath != "" {
				if opts.Catalog, err = catalog.ReadJSONL(catalogPath); err != nil {
					return err
				}
			}
			l, err := ope.ReadLog(files, opts)
			if err != nil {
				return err
			}
			for _, f := range l.TornTails {
				fmt.Fprintf(cmd.ErrOrStderr(), "eval replay: %s: its last line has no newline (an interrupted write) and was skipped\n", f)
			}
			eo := ope.Options{Seed: seed, Folds: folds, Weights: bandit.FusionWeights{Semantic: semantic, Bandit: banditW, Prior: priorW}}
			var ests []*ope.Estimate
			for _, s := range specs {
				est, err := ope.Evaluate(l, s, eo)
				if err != nil {
					return err
				}
				ests = append(ests, est)
			}
			md := ope.Markdown(l, files, ests)
			fmt.Fprint(cmd.OutOrStdout(), md)
			if out == "" {
				return nil
			}
			doc, err := json.MarshalIndent(map[string]any{"rated": provenance.Current().String(), "logs": files, "reward": opts.Reward,
				"events": len(l.Events), "skipped": l.Skipped, "logging_policies": l.Policies, "exploring": l.Exploring,
				"min_propensity": l.MinPropensity, "torn_tails": l.TornTails, "prefix": prefix, "catalog": catalogPath,
				"seed": seed, "folds": folds, "weights": eo.Weights, "policies": specs, "estimates": ests}, "", "  ")
			if err != nil {
				return err
			}
			// replay.json and replay.md are one output set: both prepared, then put in place together.
			var set []*atomicfile.Pending
			for name, data := range map[string][]byte{"replay.json": append(doc, '\n'), "replay.md": []byte(md)} {
				p, err := atomicfile.Prepare(filepath.Join(out, name), func(w io.Writer) error { _, err := w.Write(data); return err })
				if err != nil {
					for _, q := range set {
						q.Discard()
					}
					return err
				}
				set = append(set, p)
			}
			return atomicfile.CommitAll(set...)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&logs, "log", nil, "decision-log file or directory (repeatable)")
	fl.StringVar(&prefix, "prefix", "", "in directories, only the files of this prefix (decisions: rated serve's; eval dynamic: one per run)")
	fl.StringArrayVar(&policies, "policies", nil, `target policies: "recommended" or a YAML file of specs (repeatable)`)
	fl.StringVar(&catalogPath, "catalog", "", "tool catalog (JSONL) giving the tools' providers, which policies pool evidence by")
	fl.StringVar(&reward, "reward", ope.RewardAuto, "reward: auto (task outcome when reported, else execution), executed, task, served (simulator truth)")
	fl.Uint64Var(&seed, "seed", 1, "seed of the targets' own draws and of replay's acceptance draws")
	fl.IntVar(&folds, "folds", 2, "cross-fitting folds of the doubly robust reward model")
	fl.Float64Var(&semantic, "w-semantic", 0.75, "fusion weight w1 of the paper's policies")
	fl.Float64Var(&banditW, "w-bandit", 0.15, "fusion weight w2")
	fl.Float64Var(&priorW, "w-prior", 0.10, "fusion weight w3")
	fl.StringVar(&out, "out", "", "also write replay.md and replay.json into this directory")
	return cmd
}

// checkReplayFlags refuses, before any log is read, cross-fitting folds below 2 and fusion
// weights that are negative, not finite or do not sum to 1, naming the flags.
func checkReplayFlags(folds int, semantic, banditW, priorW float64) error {
	if folds < 2 {
		return fmt.Errorf("--folds %d: the doubly robust reward model needs at least 2 cross-fitting folds", folds)
	}
	ws := []struct {
		flag string
		v    float64
	}{{"--w-semantic", semantic}, {"--w-bandit", banditW}, {"--w-prior", priorW}}
	sum := 0.0
	for _, w := range ws {
		if !(w.v >= 0) || math.IsInf(w.v, 0) {
			return fmt.Errorf("%s %v: a fusion weight must be a finite number >= 0", w.flag, w.v)
		}
		sum += w.v
	}
	if math.Abs(sum-1) > 1e-9 {
		return fmt.Errorf("--w-semantic %v, --w-bandit %v, --w-prior %v: the fusion weights must sum to 1, not %.4g", semantic, banditW, priorW, sum)
	}
	return nil
}

// logFiles expands --log arguments: files as given, directories to their decision-log files.
func logFiles(args []string, prefix string) ([]string, error) {
	var files []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, fmt.Errorf("--log: %w", err)
		}
		if !st.IsDir() {
			files = append(files, a)
			continue
		}
		var found []string
		if prefix != "" {
			if found, err = decisionlog.Files(a, prefix); err != nil {
				return nil, err
			}
		} else if found, err = decisionlog.FilesIn(a); err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("--log %s: no decision-log files (*.jsonl%s)", a, map[bool]string{true: " of prefix " + prefix}[prefix != ""])
		}
		files = append(files, found...)
	}
	return files, nil
}
