package outdir_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/rated-dev/rated/internal/outdir"
)

// A command writes its files into the set's Dir and commits; until then --out holds the earlier
// set (or nothing), and a second run on the same --out is refused.
func ExampleBegin() {
	out := filepath.Join(os.TempDir(), "rated-example-out")
	defer os.RemoveAll(out)
	set, err := outdir.Begin(out, outdir.Options{Command: "eval offline", Owns: []string{"table1.*"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer set.Abort() // drops an unfinished set; does nothing after Commit
	os.WriteFile(filepath.Join(set.Dir(), "table1.md"), []byte("| MRR |\n"), 0o644)
	if _, err := outdir.Begin(out, outdir.Options{Command: "eval offline"}); err != nil {
		fmt.Println("second run refused")
	}
	if err := set.Commit(); err != nil {
		fmt.Println(err)
		return
	}
	m, _ := outdir.ReadManifest(out)
	fmt.Println(len(m.Files), outdir.Verify(out))
	// Output:
	// second run refused
	// 1 <nil>
}
