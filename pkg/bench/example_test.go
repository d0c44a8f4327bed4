package bench_test

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/rated-dev/rated/pkg/bench"
)

// OpenFile reads name.gz when name is absent, as the shipped EcoAgent release stores its files.
func ExampleOpenFile() {
	dir, _ := os.MkdirTemp("", "bench-example")
	defer os.RemoveAll(dir)
	f, _ := os.Create(filepath.Join(dir, "negatives.jsonl.gz"))
	zw := gzip.NewWriter(f)
	io.WriteString(zw, `{"query_id":"q1","positive":"t1","negatives":[]}`+"\n")
	zw.Close()
	f.Close()
	rc, err := bench.OpenFile(filepath.Join(dir, "negatives.jsonl"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	fmt.Print(string(b))
	// Output:
	// {"query_id":"q1","positive":"t1","negatives":[]}
}
