// Command gendefaultbench regenerates the embedded default benchmark from its source. It is run
// by `go generate ./pkg/defaultbench` from the package directory:
//
//	gendefaultbench -src source -out data -readme README.md
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/rated-dev/rated/internal/atomicfile"
	"github.com/rated-dev/rated/pkg/defaultbench/internal/gen"
)

func main() {
	src := flag.String("src", "source", "directory of the *.yaml source files")
	out := flag.String("out", "data", "directory to write the benchmark into")
	readme := flag.String("readme", "README.md", "datasheet whose stats block is rewritten (empty: skip)")
	flag.Parse()
	if err := run(*src, *out, *readme); err != nil {
		fmt.Fprintln(os.Stderr, "gendefaultbench:", err)
		os.Exit(1)
	}
}

func run(src, out, readme string) error {
	funcs, err := gen.ReadSource(os.DirFS(src))
	if err != nil {
		return fmt.Errorf("source %s: %w", src, err)
	}
	b, err := gen.Build(funcs)
	if err != nil {
		return fmt.Errorf("source %s: %w", src, err)
	}
	if err := b.Write(out); err != nil {
		return err
	}
	fmt.Printf("wrote %s: %d tools, %d functions, %d queries (dev %d, test %d)\n",
		out, len(b.Tools), len(funcs), len(b.Queries), len(b.Splits["dev"]), len(b.Splits["test"]))
	if readme == "" {
		return nil
	}
	old, err := os.ReadFile(readme)
	if err != nil {
		return err
	}
	text, err := gen.ReplaceStats(string(old), gen.StatsMarkdown(funcs, b))
	if err != nil {
		return fmt.Errorf("%s: %w", readme, err)
	}
	return atomicfile.WriteBytes(readme, []byte(text))
}
