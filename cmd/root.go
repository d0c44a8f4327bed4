package cmd

import (
	"github.com/spf13/cobra"

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
	return root
}
