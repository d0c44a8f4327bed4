package retrieve

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// DefaultRRFK is the constant of reciprocal-rank fusion (Cormack, Clarke and Büttcher 2009).
const DefaultRRFK = 60

// RRF is reciprocal-rank fusion of several retrievers: each ranks the corpus to the requested
// depth (at least MinDepth), and a document's fused score is Σ_r 1/(K + rank_r(d)) over the
// rankings that contain it (rank 1 for the best). Documents are returned by fused score, ties by
// corpus order; every retriever must index the same corpus in the same order.
type RRF struct {
	parts []Retriever
	// K is the fusion constant (DefaultRRFK).
	K float64
	// MinDepth is the least depth each part is searched to, so that fusing into a short list
	// still sees each part's deeper candidates (default 100).
	MinDepth int
}

// NewRRF fuses parts with K = DefaultRRFK and MinDepth 100.
func NewRRF(parts ...Retriever) (*RRF, error) {
	if len(parts) < 2 {
		return nil, fmt.Errorf("rrf: %d retrievers, want at least 2", len(parts))
	}
	return &RRF{parts: parts, K: DefaultRRFK, MinDepth: 100}, nil
}

// Name lists the fused retrievers: "RRF(BM25 + dense:bge-small-en-v1.5)".
func (f *RRF) Name() string {
	names := make([]string, len(f.parts))
	for i, p := range f.parts {
		names[i] = p.Name()
	}
	return "RRF(" + strings.Join(names, " + ") + ")"
}

// Search fuses the parts' rankings of one query.
func (f *RRF) Search(query string, k int) ([]Candidate, error) {
	all, err := f.SearchBatch([]string{query}, k)
	if err != nil {
		return nil, err
	}
	return all[0], nil
}

// SearchBatch runs each part over all queries (batched where the part can) and fuses per query.
func (f *RRF) SearchBatch(queries []string, k int) ([][]Candidate, error) {
	if k <= 0 {
		return make([][]Candidate, len(queries)), nil
	}
	depth := max(k, f.MinDepth)
	runs := make([][][]Candidate, len(f.parts))
	for i, p := range f.parts {
		r, err := SearchAll(p, queries, depth)
		if err != nil {
			return nil, fmt.Errorf("rrf: %s: %w", p.Name(), err)
		}
		if len(r) != len(queries) {
			return nil, fmt.Errorf("rrf: %s returned %d result lists for %d queries", p.Name(), len(r), len(queries))
		}
		runs[i] = r
	}
	out := make([][]Candidate, len(queries))
	for q := range queries {
		type fusedDoc struct {
			c     Candidate
			ranks []int // 1-based, one per part that retrieved it
		}
		fused := map[int]*fusedDoc{}
		for i := range f.parts {
			for rank, c := range runs[i][q] {
				d, ok := fused[c.Index]
				if !ok {
					d = &fusedDoc{c: Candidate{ID: c.ID, Index: c.Index}}
					fused[c.Index] = d
				} else if d.c.ID != c.ID {
					return nil, fmt.Errorf("rrf: corpus position %d is %q in %s but %q in another retriever", c.Index, c.ID, f.parts[i].Name(), d.c.ID)
				}
				d.ranks = append(d.ranks, rank+1)
			}
		}
		list := make([]Candidate, 0, len(fused))
		for _, d := range fused {
			// Summed best rank first: floating-point addition is not associative, and in part
			// order two documents with the same ranks (1, 7, 2 and 7, 2, 1) could differ by an
			// ulp, so rounding, not corpus order, broke their tie.
			slices.Sort(d.ranks)
			for _, r := range d.ranks {
				d.c.Score += 1 / (f.K + float64(r))
			}
			list = append(list, d.c)
		}
		sort.Slice(list, func(a, b int) bool { return better(list[a], list[b]) })
		out[q] = list[:min(k, len(list))]
	}
	return out, nil
}
