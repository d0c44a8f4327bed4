package retrieve

import (
	"errors"
	"fmt"
	"slices"

	"github.com/rated-dev/rated/pkg/bench"
)

// PairScorer scores (query, document) pairs jointly; encode.CrossEncoder is one.
type PairScorer interface {
	Name() string
	Score(query string, docs []string) ([]float64, error)
}

// Rerank re-scores the first stage's top-N candidates with a cross-encoder and returns them in
// the cross-encoder's order (ties keep the first stage's order). Candidates past the N are never
// returned, so Search(q, k) with k > N gives N results.
type Rerank struct {
	first  Retriever
	scorer PairScorer
	texts  []string // DocText of each corpus document, by index
	topN   int
}

var _ Retriever = (*Rerank)(nil)

// NewRerank wraps first (indexed over docs, in the same order) with scorer over its top topN.
func NewRerank(first Retriever, scorer PairScorer, docs []bench.Doc, topN int) (*Rerank, error) {
	if first == nil || scorer == nil {
		return nil, errors.New("rerank: nil first stage or scorer")
	}
	if topN <= 0 {
		return nil, fmt.Errorf("rerank: top-N %d, want > 0", topN)
	}
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = DocText(d)
	}
	return &Rerank{first: first, scorer: scorer, texts: texts, topN: topN}, nil
}

// Name is "<first stage>+rerank:<cross-encoder>".
func (r *Rerank) Name() string { return r.first.Name() + "+rerank:" + r.scorer.Name() }

// Search retrieves the top-N with the first stage and returns the k best by cross-encoder score.
func (r *Rerank) Search(query string, k int) ([]Candidate, error) {
	if k <= 0 {
		return nil, nil
	}
	cands, err := r.first.Search(query, r.topN)
	if err != nil {
		return nil, err
	}
	texts := make([]string, len(cands))
	for i, c := range cands {
		if c.Index < 0 || c.Index >= len(r.texts) {
			return nil, fmt.Errorf("rerank: first stage %s returned index %d outside the corpus of %d", r.first.Name(), c.Index, len(r.texts))
		}
		texts[i] = r.texts[c.Index]
	}
	scores, err := r.scorer.Score(query, texts)
	if err != nil {
		return nil, fmt.Errorf("rerank %s: %w", r.scorer.Name(), err)
	}
	if len(scores) != len(cands) {
		return nil, fmt.Errorf("rerank %s: %d scores for %d candidates", r.scorer.Name(), len(scores), len(cands))
	}
	out := make([]Candidate, len(cands))
	for i, c := range cands {
		out[i] = Candidate{ID: c.ID, Index: c.Index, Score: scores[i]}
	}
	slices.SortStableFunc(out, func(a, b Candidate) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	return out[:min(k, len(out))], nil
}
