package train

import (
	"fmt"
	"strings"
)

// report renders TRAINING.md: data, settings, seed, steps, the loss curve and the validation curve.
func (t *trainer) report(chosen int) string {
	cfg, art, st := t.cfg, t.art, t.st
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("# %s: training record", cfg.Name)
	p("")
	p("Fine-tuned by `rated finetune` (pkg/train) from `%s` with in-batch InfoNCE plus hard negatives", cfg.ModelDir)
	p("through an ONNX Runtime training graph (scripts/train/build_artifacts.py). Parameters exported: step %d", chosen)
	if len(st.Val) > 0 {
		p("(best %s MRR; step 0 is the source model).", cfg.ValSplit)
	} else {
		p("(the last step; no validation).")
	}
	p("")
	p("## Data")
	p("")
	p("| | |")
	p("|---|---|")
	p("| benchmark | `%s` |", cfg.BenchDir)
	p("| training split | %s: %d (query, positive) pairs |", cfg.TrainSplit, st.Examples)
	kinds := "hard first, then the rest"
	if cfg.NegativeKinds != nil {
		kinds = "kinds " + strings.Join(cfg.NegativeKinds, ", ")
	}
	p("| negatives per pair | %d: %d from negatives.jsonl (%s), %d BM25-mined, %d random |", art.Negatives, st.Negatives.File, kinds, st.Negatives.BM25, st.Negatives.Random)
	if cfg.ValSplit != "-" {
		q := len(cfg.Bench.SplitQueries(cfg.ValSplit))
		if cfg.ValMaxQueries > 0 && cfg.ValMaxQueries < q {
			q = cfg.ValMaxQueries
		}
		p("| validation | %s: %d queries against %d documents, MRR over the full ranking |", cfg.ValSplit, q, len(cfg.Bench.Corpus))
	}
	p("")
	p("## Settings")
	p("")
	p("| | |")
	p("|---|---|")
	p("| towers | %s |", art.Towers)
	p("| batch (queries per step) | %d, with %d in-batch positives and %d hard negatives as candidates |", art.Batch, art.Batch, art.Batch*art.Negatives)
	p("| max length (tokens) | %d |", art.Seq)
	p("| temperature τ | %g |", art.Tau)
	p("| pooling | %s, then L2 normalisation |", art.Pooling)
	p("| optimizer | AdamW (onnxblock defaults: β 0.9/0.999, ε 1e-8, weight decay 0.01) |")
	p("| learning rate | %g peak, linear warm-up %d steps, linear decay to 0 at step %d |", cfg.LR, cfg.Warmup, st.TotalSteps)
	p("| epochs / steps | %d / %d taken of %d planned |", cfg.Epochs, st.Step, st.TotalSteps)
	p("| seed | %d (data order per epoch: PCG(seed, epoch); random negatives: PCG(seed, \"nega\")) |", st.Seed)
	p("| ONNX Runtime | %s (training API) |", st.Library)
	if st.LoopSeconds > 0 && st.Step > 0 {
		p("| time | %.1f s inside ONNX Runtime steps, %.1f s in the whole loop (validations and checkpoints included) |", st.StepSeconds, st.LoopSeconds)
	}
	p("")
	p("## Loss")
	p("")
	p("| steps | mean loss | last lr |")
	p("|---|---|---|")
	n := len(st.Losses)
	window := max(1, (n+19)/20)
	for start := 0; start < n; start += window {
		end := min(n, start+window)
		var sum float64
		for _, l := range st.Losses[start:end] {
			sum += float64(l)
		}
		p("| %d-%d | %.4f | %.3g |", start+1, end, sum/float64(end-start), st.LRs[end-1])
	}
	if len(st.Val) > 0 {
		p("")
		p("## Validation (%s MRR)", cfg.ValSplit)
		p("")
		p("| step | MRR |")
		p("|---|---|")
		for _, v := range st.Val {
			mark := ""
			if v.Step == st.BestStep {
				mark = " (best)"
			}
			p("| %d | %.4f%s |", v.Step, v.MRR, mark)
		}
	}
	return b.String()
}
