package retrieve

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// TestInt8DenseMatchesExact checks the int8 scan with float32 re-scoring against exact search:
// with a shortlist of 100 the top 10 are those of exact search (same ids, float32 scores within 1e-5)
// for clustered data, and the shortlist never returns more than k or unsorted results.
func TestInt8DenseMatchesExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	const n, dim, k = 5000, 48, 10
	docs := clustered(rng, n, dim, 50, 0.2)
	d := newTestDense(t, docs, dim)
	q8, err := NewInt8Dense(d, 100)
	if err != nil {
		t.Fatal(err)
	}
	same := 0
	queries := clustered(rng, 100, dim, 50, 0.2)
	for qi, q := range queries {
		want, _ := d.SearchVector(q, k)
		got, err := q8.SearchVector(q, k)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != k {
			t.Fatalf("query %d: %d results", qi, len(got))
		}
		if slices.EqualFunc(got, want, func(a, b Candidate) bool { return a.Index == b.Index && abs64(a.Score-b.Score) < 1e-5 }) {
			same++
		} else if qi == 0 {
			t.Logf("query 0: int8 %v, exact %v", got, want)
		}
	}
	if same < 98 {
		t.Errorf("%d of 100 queries have exactly the exact top 10, want >= 98", same)
	}
	if _, err := NewInt8Dense(d, 0); err == nil {
		t.Error("accepted rescore 0")
	}
	// A shortlist of 1 still returns k results? No: the shortlist is at least k.
	small, _ := NewInt8Dense(d, 1)
	got, _ := small.SearchVector(queries[0], k)
	if len(got) != k {
		t.Errorf("rescore 1: %d results, want %d (the shortlist is at least k)", len(got), k)
	}
}

// The shortlist is Rescore long whatever the number of workers: with a shortlist of exactly k
// the answer is the int8 scan's own top k, the same on one worker as on four (it used to
// re-score Rescore per worker, so recall rose with the host's cores).
func TestInt8ShortlistIndependentOfWorkers(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	const n, dim, k = 8 * 512, 32, 10
	d := newTestDense(t, clustered(rng, n, dim, 40, 0.3), dim)
	q8, err := NewInt8Dense(d, k)
	if err != nil {
		t.Fatal(err)
	}
	queries := clustered(rng, 30, dim, 40, 0.3)
	search := func(procs int) [][]Candidate {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		var out [][]Candidate
		for _, q := range queries {
			got, err := q8.SearchVector(q, k)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, got)
		}
		return out
	}
	one, four := search(1), search(4)
	for i := range queries {
		if !slices.Equal(one[i], four[i]) {
			t.Fatalf("query %d: 1 worker %v, 4 workers %v", i, one[i], four[i])
		}
	}
}
