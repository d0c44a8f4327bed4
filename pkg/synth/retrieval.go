package synth

import (
	"fmt"
	"math"
	"strings"

	"github.com/rated-dev/rated/pkg/retrieve"
)

// PaperMinCosine is the paper's retrieval threshold for EcoAgent-Real: GTE-Large top-5 candidates
// with cosine similarity below 0.7 are dropped before the LLM validator sees them.
const PaperMinCosine = 0.7

// IsCosineRetriever reports whether a retriever's scores are cosine similarities in [-1, 1]: the
// dense retrievers of pkg/retrieve (named "dense:<model>"), whose embeddings are L2-normalised.
// Other retrievers (BM25) have scores without a fixed scale.
func IsCosineRetriever(name string) bool { return strings.HasPrefix(name, "dense:") }

// DefaultMinRetrievalScore is the Real retrieval threshold used when none is given: the paper's
// cosine 0.7 for a dense retriever, and 0 (keep every top-k candidate) for any other retriever,
// because BM25 scores grow with query length and corpus statistics and have no fixed scale, so no
// single value means the same thing across runs.
func DefaultMinRetrievalScore(retrieverName string, denseMin float64) float64 {
	if IsCosineRetriever(retrieverName) {
		return denseMin
	}
	return 0
}

// ThresholdStep is what a retrieval threshold would do to the Real candidate pairs.
type ThresholdStep struct {
	Threshold float64 `json:"threshold"`
	// Removed counts the pairs scoring below Threshold; RemovedByStep those of them not already
	// removed by the previous (lower) threshold of the sweep.
	Removed       int `json:"removed"`
	RemovedByStep int `json:"removed_by_step"`
	Kept          int `json:"kept"`
	// QueriesLeft counts the queries with at least one pair kept.
	QueriesLeft int `json:"queries_left"`
}

// SweepThresholds reports, for each threshold in ascending order, how many candidate pairs a
// "drop below it" rule removes (in all, and beyond the previous threshold), keeps, and how many
// queries keep at least one pair.
func SweepThresholds(pairs []RealPair, thresholds []float64) []ThresholdStep {
	out := make([]ThresholdStep, 0, len(thresholds))
	prev := 0
	for _, t := range thresholds {
		st := ThresholdStep{Threshold: t}
		left := map[string]bool{}
		for _, p := range pairs {
			if p.RetrievalScore < t {
				st.Removed++
				continue
			}
			st.Kept++
			left[p.Query.ID] = true
		}
		st.RemovedByStep = st.Removed - prev
		prev = st.Removed
		st.QueriesLeft = len(left)
		out = append(out, st)
	}
	return out
}

// SweepGrid returns the thresholds reported in stats.json: for cosine scores 0.50, 0.55, …, 0.95
// (around the paper's 0.7); for unscaled scores ten equal steps from 0 up to the largest score.
// The configured threshold is added when it is not on the grid. The result is ascending.
func SweepGrid(cosine bool, scores []float64, configured float64) []float64 {
	var grid []float64
	if cosine {
		for i := 10; i <= 19; i++ {
			grid = append(grid, float64(i)*0.05)
		}
	} else {
		hi := 0.0
		for _, s := range scores {
			hi = math.Max(hi, s)
		}
		if hi > 0 {
			for i := 0; i < 10; i++ {
				grid = append(grid, hi*float64(i)/10)
			}
		}
	}
	out := make([]float64, 0, len(grid)+1)
	added := false
	for _, g := range grid {
		g = math.Round(g*1e6) / 1e6
		if !added && configured <= g {
			if math.Abs(configured-g) > 1e-9 {
				out = append(out, configured)
			}
			added = true
		}
		out = append(out, g)
	}
	if !added {
		out = append(out, configured)
	}
	return out
}

// describeRetrievalScores summarises retrieval scores: cosine scores on a fixed histogram of 20
// bins of 0.05 over [0, 1] (40 over [-1, 1] when a score is negative) so that runs compare;
// unscaled scores on 10 bins over their own range.
func describeRetrievalScores(scores []float64, cosine bool) Distribution {
	if !cosine {
		return Describe(scores, 10, minOf(scores), maxOf(scores))
	}
	if len(scores) > 0 && minOf(scores) < 0 {
		return Describe(scores, 40, -1, 1)
	}
	return Describe(scores, 20, 0, 1)
}

// batchSearcher is implemented by retrievers that embed many queries at once (retrieve.Dense).
type batchSearcher interface {
	SearchBatch(queries []string, k int) ([][]retrieve.Candidate, error)
}

// prefetched answers Search from results retrieved in one batch, falling back to the underlying
// retriever for a query or depth it does not hold.
type prefetched struct {
	retrieve.Retriever
	k   int
	res map[string][]retrieve.Candidate
}

func (p *prefetched) Search(query string, k int) ([]retrieve.Candidate, error) {
	if c, ok := p.res[query]; ok && k <= p.k {
		return c[:min(k, len(c))], nil
	}
	return p.Retriever.Search(query, k)
}

// prefetch retrieves the top k of all queries in one batch when r supports it (a dense retriever
// embeds them together instead of one call per query); otherwise it returns r unchanged.
func prefetch(r retrieve.Retriever, queries []string, k int) (retrieve.Retriever, error) {
	b, ok := r.(batchSearcher)
	if !ok || len(queries) == 0 {
		return r, nil
	}
	res, err := b.SearchBatch(queries, k)
	if err != nil {
		return nil, fmt.Errorf("%s: batch retrieval of %d queries: %w", r.Name(), len(queries), err)
	}
	m := make(map[string][]retrieve.Candidate, len(queries))
	for i, q := range queries {
		m[q] = res[i]
	}
	return &prefetched{Retriever: r, k: k, res: m}, nil
}

// RetrievalReport describes the Real candidate pairs of a retriever before the LLM validator:
// what stats.json reports under "real", and what `rated build-bench --retrieval-only` writes.
type RetrievalReport struct {
	Retriever string `json:"retriever"`
	// Scale is "cosine" (a dense retriever) or "unscaled" (BM25).
	Scale             string  `json:"score_scale"`
	MinRetrievalScore float64 `json:"min_retrieval_score"`
	Queries           int     `json:"queries"`
	CandidatePairs    int     `json:"candidate_pairs"`
	// BelowThreshold counts the pairs scoring below MinRetrievalScore; QueriesLeft the queries
	// with at least one pair at or above it.
	BelowThreshold int `json:"below_threshold"`
	QueriesLeft    int `json:"queries_left"`
	// Scores is the distribution of all candidate scores; Top1Scores that of each query's best.
	Scores     Distribution    `json:"score_distribution"`
	Top1Scores Distribution    `json:"top1_score_distribution"`
	Sweep      []ThresholdStep `json:"threshold_sweep"`
}

// ReportRetrieval summarises the candidate pairs of queries (in query order then rank order, as
// RealCandidates returns them) under the named retriever and threshold.
func ReportRetrieval(queries int, pairs []RealPair, retrieverName string, minScore float64) RetrievalReport {
	cosine := IsCosineRetriever(retrieverName)
	rep := RetrievalReport{Retriever: retrieverName, Scale: "unscaled", MinRetrievalScore: minScore,
		Queries: queries, CandidatePairs: len(pairs)}
	if cosine {
		rep.Scale = "cosine"
	}
	var scores, top1 []float64
	for i, p := range pairs {
		scores = append(scores, p.RetrievalScore)
		if i == 0 || pairs[i-1].Query.ID != p.Query.ID {
			top1 = append(top1, p.RetrievalScore)
		}
	}
	rep.Scores = describeRetrievalScores(scores, cosine)
	rep.Top1Scores = describeRetrievalScores(top1, cosine)
	at := SweepThresholds(pairs, []float64{minScore})[0]
	rep.BelowThreshold, rep.QueriesLeft = at.Removed, at.QueriesLeft
	rep.Sweep = SweepThresholds(pairs, SweepGrid(cosine, scores, minScore))
	return rep
}
