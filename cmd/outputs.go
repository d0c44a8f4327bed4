package cmd

import (
	"fmt"
	"strings"

	"github.com/rated-dev/rated/internal/outdir"
)

// The output sets of the commands (internal/outdir): the top-level names each writes into its
// --out (an older --out holding only these is replaced; anything else is refused) and the resume
// state it keeps across runs.

func evalDynamicOutput() outdir.Options {
	return outdir.Options{Command: "eval dynamic", Owns: []string{"table2.*", "paired.*", "bounds.*", "config.yaml", "runs.jsonl", "sr-*.png",
		"sweep.*", "sweep-*.png", "chosen.yaml", "goals.*"}}
}

func evalOfflineOutput() outdir.Options {
	return outdir.Options{Command: "eval offline", Owns: []string{"table1.*", "per_query.csv", "qrels.*.trec", "runs"}}
}

func evalLatencyOutput() outdir.Options {
	return outdir.Options{Command: "eval latency", Owns: []string{"table3.*", "table3_search.*"}}
}

func reproduceOutput() outdir.Options {
	return outdir.Options{Command: "reproduce", Owns: []string{"table1", "table1-*", "table2", "table3"}}
}

// buildBenchOutput keeps journal/ (every finished LLM request: the resume state) and audit/ (the
// judge journals `build-bench audit-syn` writes into the same folder).
func buildBenchOutput() outdir.Options {
	return outdir.Options{Command: "build-bench", Owns: []string{"syn", "real", "stats.json", "DATASHEET.md", "retrieval.json"},
		Keep: []string{"journal", "audit"}}
}

// buildBenchRetrievalOutput is `build-bench --retrieval-only`: it writes retrieval.json alone and
// carries the rest of an earlier full run over unchanged.
func buildBenchRetrievalOutput() outdir.Options {
	o := buildBenchOutput()
	o.Command = "build-bench --retrieval-only"
	o.Carry = []string{"syn", "real", "stats.json", "DATASHEET.md"} // listed with their sha256, as the full run's
	return o
}

// finetuneOutput keeps checkpoints/ (the resume state) and artifacts/ (the training graph, built
// once).
func finetuneOutput() outdir.Options {
	return outdir.Options{Command: "finetune", Owns: []string{"*.onnx", "tokenizer.json", "rated.yaml", "TRAINING.md"},
		Keep: []string{"checkpoints", "artifacts"}}
}

// modelInterpolateOutput is a model folder, as finetune writes it, without the resume state.
func modelInterpolateOutput() outdir.Options {
	return outdir.Options{Command: "model interpolate", Owns: []string{"*.onnx", "tokenizer.json", "rated.yaml"}}
}

// input is a folder a command reads, named by its flag.
type input struct{ flag, dir string }

// refuseInside refuses a file or folder that a command writes beside its output set (named by
// its flag) when it lies inside --out: the set replaces --out as a whole, so it would be lost.
func refuseInside(out, flag, path string) error {
	inside, err := outdir.Holds(out, path)
	if err != nil {
		return err
	}
	if inside {
		return fmt.Errorf("--%s %s is inside --out %s, which is replaced as a whole when the run ends: choose a path outside it", flag, path, out)
	}
	return nil
}

// refuseInputsInside refuses an --out that overlaps the --bench folder (when one is given) or
// holds one of the files of flag (--config): the set replaces --out as a whole, so a config
// kept in it was silently replaced by the resolved one, and a benchmark read from it lost.
func refuseInputsInside(out, bench, flag string, files ...string) error {
	if bench != "" {
		if err := refuseOverlap(out, input{"--bench", bench}); err != nil {
			return err
		}
	}
	for _, f := range files {
		if err := refuseInside(out, strings.TrimPrefix(flag, "--"), f); err != nil {
			return err
		}
	}
	return nil
}

// refuseOverlap refuses --out when it holds one of the inputs or lies inside one: the set
// replaces --out as a whole, so the input would be lost or read half-replaced.
func refuseOverlap(out string, inputs ...input) error {
	for _, in := range inputs {
		inside, err := outdir.Holds(out, in.dir)
		if err != nil {
			return err
		}
		around, err := outdir.Holds(in.dir, out)
		if err != nil {
			return err
		}
		if inside || around {
			return fmt.Errorf("--out %s and %s %s overlap; write to another folder", out, in.flag, in.dir)
		}
	}
	return nil
}
