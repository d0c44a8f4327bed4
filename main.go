// Command rated reproduces RATED (reliability-aware tool retrieval) end to end and serves it to
// agent runtimes: `go install github.com/rated-dev/rated@latest` installs it.
package main

import "github.com/rated-dev/rated/cmd"

func main() { cmd.Execute() }
