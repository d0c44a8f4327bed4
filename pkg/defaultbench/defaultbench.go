package defaultbench

import (
	"embed"
	"fmt"
	"io/fs"

	"github.com/rated-dev/rated/pkg/bench"
)

//go:generate go run ./internal/gen/cmd/gendefaultbench -src source -out data -readme README.md

//go:embed data/corpus.jsonl data/queries.jsonl data/catalog.jsonl data/qrels/dev.tsv data/qrels/test.tsv
var files embed.FS

// FS returns the embedded benchmark: BEIR layout (corpus.jsonl, queries.jsonl, qrels/dev.tsv,
// qrels/test.tsv) plus catalog.jsonl, at the root of the returned file system.
func FS() fs.FS {
	sub, err := fs.Sub(files, "data")
	if err != nil {
		// fs.Sub fails only on an invalid path name; "data" is valid, so this cannot happen.
		panic(fmt.Sprintf("defaultbench: %v", err))
	}
	return sub
}

// Load reads FS() with bench.Read.
func Load() (*bench.Bench, error) {
	b, err := bench.Read(FS())
	if err != nil {
		return nil, fmt.Errorf("embedded default benchmark: %w", err)
	}
	return b, nil
}
