package synth

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestLineProgressRate: the plain-line progress reports items per minute from its clock, and no
// rate at all when the stage ran under a second (cache hits), where one would read absurdly.
func TestLineProgressRate(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	now := t0
	var out bytes.Buffer
	p := NewProgress(&out, false, func() time.Time { return now })
	p.Start("encode", 10, 0)
	now = t0.Add(time.Millisecond)
	p.Add(10) // all ten in a millisecond
	if line := lastLine(out.String()); line != "encode: 10/10 (100%), - items/min, ETA 0s" {
		t.Fatalf("cached stage: %q", line)
	}
	out.Reset()
	now = t0
	p.Start("generate", 20, 5)
	now = t0.Add(2 * time.Minute)
	p.Add(2) // 2 items in 2 minutes (the 5 resumed ones do not count): 1.0 per minute, 13 left
	if line := lastLine(out.String()); line != "generate: 7/20 (35%), 1.0 items/min, ETA 13m0s" {
		t.Fatalf("running stage: %q", line)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}
