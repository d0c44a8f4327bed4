package atomicfile_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/rated-dev/rated/internal/atomicfile"
)

// A write that fails half-way leaves the old content in place, and nothing else in the
// directory: the partial content only ever existed in the temporary file, which is removed.
func ExampleWrite() {
	dir, err := os.MkdirTemp("", "atomicfile")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "catalog.jsonl")
	if err := atomicfile.WriteBytes(path, []byte("old\n")); err != nil {
		panic(err)
	}
	err = atomicfile.Write(path, func(w io.Writer) error {
		fmt.Fprintln(w, "new, half")
		return errors.New("crawl interrupted")
	})
	fmt.Println("error:", err != nil)
	content, _ := os.ReadFile(path)
	entries, _ := os.ReadDir(dir)
	fmt.Printf("%q, %d file(s) in the directory\n", content, len(entries))
	// Output:
	// error: true
	// "old\n", 1 file(s) in the directory
}

// Two files that must land together (crawl's catalog and its stats): both are prepared first,
// and only when both are complete are they renamed into place.
func ExamplePrepare() {
	dir, err := os.MkdirTemp("", "atomicfile")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	var pending []*atomicfile.Pending
	for _, name := range []string{"catalog.jsonl", "stats.json"} {
		p, err := atomicfile.Prepare(filepath.Join(dir, name), func(w io.Writer) error {
			_, err := fmt.Fprintln(w, name)
			return err
		})
		if err != nil {
			panic(err)
		}
		pending = append(pending, p)
	}
	_, err = os.Stat(filepath.Join(dir, "catalog.jsonl"))
	fmt.Println("catalog.jsonl before Commit:", !os.IsNotExist(err))
	for _, p := range pending {
		if err := p.Commit(); err != nil {
			panic(err)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		fmt.Println(e.Name())
	}
	// Output:
	// catalog.jsonl before Commit: false
	// catalog.jsonl
	// stats.json
}
