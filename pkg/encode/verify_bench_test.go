package encode

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"

	"github.com/rated-dev/rated/internal/testassets"
)

// BenchmarkOpenVerified measures what checking the recorded sha256 costs when a model folder is
// opened (docs/BENCHMARKS.md, "Model folder verification"):
//
//	hash-model-file  reading and hashing model.onnx alone: the verification's own cost
//	open-first       Open with a fresh Runtime each time: every open hashes the files
//	open-repeat      Open with one shared Runtime: the digests are cached by path, size and
//	                 mtime, so repeated opens in a process (eval offline, eval latency) skip hashing
func BenchmarkOpenVerified(b *testing.B) {
	lib := testassets.ORTLibrary(b)
	dir := testassets.Model(b, "bge-small-en-v1.5")
	model := filepath.Join(dir, "model.onnx")
	b.Run("hash-model-file", func(b *testing.B) {
		for b.Loop() {
			data, err := os.ReadFile(model)
			if err != nil {
				b.Fatal(err)
			}
			sha256.Sum256(data)
		}
	})
	open := func(b *testing.B, rt *Runtime) {
		m, err := Open(dir, Options{Runtime: rt})
		if err != nil {
			b.Fatal(err)
		}
		m.Close()
	}
	b.Run("open-first", func(b *testing.B) {
		for b.Loop() {
			open(b, NewRuntime(lib))
		}
	})
	b.Run("open-repeat", func(b *testing.B) {
		rt := NewRuntime(lib)
		open(b, rt)
		for b.Loop() {
			open(b, rt)
		}
	})
}
