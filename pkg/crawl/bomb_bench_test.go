package crawl

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
)

// BenchmarkLoadTreeZipBomb reads a 1.5 MB wheel of 24 members of 60 MiB of text each (a
// decompression bomb) with DefaultLimits; B/op is the memory the reader allocates for it. The
// reference is BenchmarkLoadTreeRealWheelSize: a wheel of the same member count and a real
// compression ratio, whose kept bytes every reader must allocate.
// docs/BENCHMARKS.md has the figures before and after issue 16.
func BenchmarkLoadTreeZipBomb(b *testing.B) {
	bomb := filepath.Join(b.TempDir(), "bomb.whl")
	writeRawZip(b, bomb, 24, bytes.Repeat([]byte("a"), 60<<20))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tr, err := LoadTree(context.Background(), bomb, "", DefaultLimits())
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(len(tr.Files)), "kept-files/op")
	}
}

// BenchmarkLoadTreeRealWheelSize is the reference: 24 members of 64 KiB of varied text.
func BenchmarkLoadTreeRealWheelSize(b *testing.B) {
	var buf bytes.Buffer
	for i := 0; buf.Len() < 64<<10; i++ {
		buf.WriteString("def tool_" + string(rune('a'+i%26)) + "(self, x):\n    return self.value + x\n")
	}
	src := filepath.Join(b.TempDir(), "real.whl")
	writeRawZip(b, src, 24, buf.Bytes())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tr, err := LoadTree(context.Background(), src, "", DefaultLimits())
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(len(tr.Files)), "kept-files/op")
	}
}
