package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestLinesRate: the plain-line reporter gives items per minute from its clock, counting only
// this run's items, and no rate at all when the stage ran under a second (cache hits), where one
// would read absurdly.
func TestLinesRate(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	now := t0
	var out bytes.Buffer
	p := New(&out, false, func() time.Time { return now })
	p.Start("encode", 10, 0)
	now = t0.Add(time.Millisecond)
	p.Add(10) // all ten in a millisecond
	if line := lastLine(out.String()); line != "encode: 10/10 (100%), - items/min, ETA 0s" {
		t.Fatalf("cached stage: %q", line)
	}
	out.Reset()
	now = t0
	p.Start("generate", 20, 5)
	if line := lastLine(out.String()); line != "generate: 20 items, 5 already done (resumed)" {
		t.Fatalf("resumed start: %q", line)
	}
	now = t0.Add(2 * time.Minute)
	p.Add(2) // 2 items in 2 minutes (the 5 resumed ones do not count): 1.0 per minute, 13 left
	if line := lastLine(out.String()); line != "generate: 7/20 (35%), 1.0 items/min, ETA 13m0s" {
		t.Fatalf("running stage: %q", line)
	}
	p.Finish()
	if line := lastLine(out.String()); line != "generate: done in 2m0s" {
		t.Fatalf("end: %q", line)
	}
}

// TestFuncStartsOverPerJob: one callback reports several jobs in turn (eval offline encodes one
// catalog per retriever and then reranks): a job of another size, or whose count goes back,
// starts a new stage, so a job that jumps straight to its end (a cached catalog) still reports
// it, and each stage ends once.
func TestFuncStartsOverPerJob(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var out bytes.Buffer
	f := Func(New(&out, false, func() time.Time { return t0 }), "eval offline")
	for _, d := range []int{0, 1, 2, 2} {
		f(d, 2)
	}
	f(20, 20) // another size, done at once
	f(1, 20)  // a third job of that size, left unfinished
	want := strings.Join([]string{
		"eval offline: 2 items",
		"eval offline: 1/2 (50%), - items/min, ETA 0s",
		"eval offline: 2/2 (100%), - items/min, ETA 0s",
		"eval offline: done in 0s",
		"eval offline: 20 items",
		"eval offline: 20/20 (100%), - items/min, ETA 0s",
		"eval offline: done in 0s",
		"eval offline: 20 items",
	}, "\n") + "\n"
	if out.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", out.String(), want)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}
