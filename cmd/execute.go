// Package cmd is rated's command tree (cobra's layout: the top-level main.go calls Execute).
// Each subcommand only wires flags and configuration to a package under pkg/.
package cmd

import (
	"fmt"
	"os"
)

// Execute runs the rated command line and exits non-zero with the error on failure.
func Execute() {
	if err := newRootCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "rated:", err)
		os.Exit(1)
	}
}
