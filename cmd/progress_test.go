package cmd

import (
	"bytes"
	"testing"
)

// One callback reports several jobs in turn (eval offline encodes one catalog per retriever and
// then reranks): a job of another size, or whose count goes back, starts over, so a job that
// jumps straight to its end (a cached catalog) still reports it.
func TestProgressStartsOverPerJob(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, "eval offline")
	for _, d := range []int{0, 1, 2} {
		p(d, 2)
	}
	p(20, 20) // another size, done at once
	p(1, 20)  // a third job of that size
	want := "eval offline: 0/2\neval offline: 1/2\neval offline: 2/2\neval offline: 20/20\neval offline: 1/20\n"
	if buf.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", buf.String(), want)
	}
}
