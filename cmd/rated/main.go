// Command rated reproduces RATED (reliability-aware tool retrieval) end to end and serves it to
// agent runtimes. Each subcommand only wires flags and configuration to a package under pkg/.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := newRootCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "rated:", err)
		os.Exit(1)
	}
}
