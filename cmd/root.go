package cmd

import (
	"errors"
	"fmt"
	"github.com/spf13/cobra"
	"strings"

	"github.com/rated-dev/rated/pkg/provenance"
)

// newRootCmd builds the command tree. Each subcommand lives in its own file as newXxxCmd().
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "rated",
		Short:         "Reliability-aware tool retrieval for AI agents (RATED), end to end",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       provenance.Current().String(),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.PersistentFlags().String(homeFlag, "", "asset home: models, ONNX Runtime, LLM, caches (default $RATED_HOME, $RATED_ASSETS, ./.rated if present, else $XDG_DATA_HOME/rated = ~/.local/share/rated)")
	evalCmd := &cobra.Command{Use: "eval", Short: "Run the paper's evaluations (Tables 1-3)"}
	// Register eval subcommands here (one line each).
	evalCmd.AddCommand(newEvalDynamicCmd())
	evalCmd.AddCommand(newEvalOfflineCmd())
	evalCmd.AddCommand(newEvalLatencyCmd())
	evalCmd.AddCommand(newEvalReplayCmd())
	root.AddCommand(evalCmd)
	// Register top-level subcommands here (one line each).
	root.AddCommand(newReproduceCmd())
	root.AddCommand(newBuildBenchCmd())
	root.AddCommand(newLLMCmd())
	root.AddCommand(newModelCmd())
	root.AddCommand(newCrawlCmd())
	root.AddCommand(newFinetuneCmd())
	root.AddCommand(newSetupCmd())
	root.AddCommand(newServeCmd())
	strictArgs(root)
	return root
}

// strictArgs makes a stray word an error rather than something ignored: a command that takes
// no positional arguments refuses them (`rated eval dynamic configs/x.yaml` ran the paper's
// config, without the file), and a group refuses an unknown subcommand (`rated eval dynamc`
// printed help and exited 0), suggesting the near ones. Commands that declare their own Args
// keep them.
func strictArgs(c *cobra.Command) {
	for _, sub := range c.Commands() {
		strictArgs(sub)
	}
	switch {
	case !c.HasParent():
		// The root already refuses unknown commands.
	case c.HasSubCommands() && !c.Runnable():
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return c.Help()
			}
			msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
			if c.SuggestionsMinimumDistance <= 0 {
				c.SuggestionsMinimumDistance = 2 // cobra's own default for the root
			}
			if near := c.SuggestionsFor(args[0]); len(near) > 0 {
				msg += "; did you mean " + strings.Join(near, " or ") + "?"
			}
			return errors.New(msg)
		}
	case c.Args == nil:
		c.Args = cobra.NoArgs
	}
}
