package metrics

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// This file holds the offline IR measures (Table 1) with the semantics of trec_eval 9 (as in
// pytrec_eval), which the tests check them against:
//
//   - A document is relevant when its graded relevance is > 0; nDCG uses the grade itself as the
//     gain (trec_eval's linear gain) and log2(rank+1) as the discount.
//   - A ranking is a list of document ids, best first. A document listed more than once counts
//     only at its first (best) position; later copies are dropped and the documents after them
//     move up. (A trec_eval run file cannot hold a document twice for one query.)
//   - A query without any relevant document scores 0 on every measure, as in trec_eval. A query
//     with an empty ranking also scores 0 on every measure (trec_eval -c). Which queries enter a
//     mean is the caller's choice; pkg/evaloffline states its rule in the table notes.

// Judgments are the graded relevance labels of one query: document id -> grade (> 0 relevant).
type Judgments map[string]int

// Kind is one family of IR measures.
type Kind int

// The IR measures.
const (
	// RR is the reciprocal rank of the first relevant document (0 when none is ranked); its mean
	// over queries is MRR. K = 0 means the whole ranking.
	RR Kind = iota
	// Recall is the fraction of the query's relevant documents that are in the top K.
	Recall
	// Hit is 1 when at least one relevant document is in the top K, else 0 (trec_eval success@K).
	Hit
	// NDCG is the normalised discounted cumulative gain at K (trec_eval ndcg_cut.K).
	NDCG
	// AP is the average precision: the mean over the query's relevant documents of the
	// precision at the rank of each one retrieved (0 for those not retrieved); its mean over
	// queries is MAP (trec_eval map). K > 0 cuts the ranking first (trec_eval map_cut.K).
	AP
	// Precision is the fraction of the top K ranks holding a relevant document, always divided
	// by K even when fewer documents are ranked (trec_eval P.K).
	Precision
)

// Measure is one IR measure at a cutoff.
type Measure struct {
	Kind Kind
	// K is the cutoff (top K documents); for RR, 0 means no cutoff.
	K int
}

// String names the measure as in the tables: MRR, MRR@10, Recall@5, Hit@5, nDCG@10, MAP,
// MAP@10, P@5.
func (m Measure) String() string {
	switch m.Kind {
	case RR:
		if m.K == 0 {
			return "MRR"
		}
		return "MRR@" + strconv.Itoa(m.K)
	case Recall:
		return "Recall@" + strconv.Itoa(m.K)
	case Hit:
		return "Hit@" + strconv.Itoa(m.K)
	case NDCG:
		return "nDCG@" + strconv.Itoa(m.K)
	case AP:
		if m.K == 0 {
			return "MAP"
		}
		return "MAP@" + strconv.Itoa(m.K)
	case Precision:
		return "P@" + strconv.Itoa(m.K)
	}
	return fmt.Sprintf("Measure(%d@%d)", m.Kind, m.K)
}

// IRMeasuresName is the measure's name in ir_measures (and ranx): RR, RR@10, R@5, Success@5,
// nDCG@10, AP, AP@10, P@5. The value ir_measures gives a query equals Eval's.
func (m Measure) IRMeasuresName() string {
	at := ""
	if m.K > 0 {
		at = "@" + strconv.Itoa(m.K)
	}
	switch m.Kind {
	case RR:
		return "RR" + at
	case Recall:
		return "R" + at
	case Hit:
		return "Success" + at
	case NDCG:
		return "nDCG" + at
	case AP:
		return "AP" + at
	case Precision:
		return "P" + at
	}
	return m.String()
}

// TrecEvalName is the name of the measure in trec_eval / pytrec_eval (recip_rank, recall_5,
// success_5, ndcg_cut_10, map, map_cut_10, P_5). RR with a cutoff has no trec_eval name and
// returns "".
func (m Measure) TrecEvalName() string {
	switch m.Kind {
	case RR:
		if m.K == 0 {
			return "recip_rank"
		}
	case Recall:
		return "recall_" + strconv.Itoa(m.K)
	case Hit:
		return "success_" + strconv.Itoa(m.K)
	case NDCG:
		return "ndcg_cut_" + strconv.Itoa(m.K)
	case AP:
		if m.K == 0 {
			return "map"
		}
		return "map_cut_" + strconv.Itoa(m.K)
	case Precision:
		return "P_" + strconv.Itoa(m.K)
	}
	return ""
}

// ParseMeasure parses the names String and IRMeasuresName return (case-insensitive): MRR, RR,
// MRR@k, RR@k, Recall@k, R@k, Hit@k, Success@k, nDCG@k, MAP, AP, MAP@k, AP@k, P@k.
func ParseMeasure(s string) (Measure, error) {
	name, kText, hasK := strings.Cut(strings.TrimSpace(s), "@")
	k := 0
	if hasK {
		v, err := strconv.Atoi(kText)
		if err != nil || v <= 0 {
			return Measure{}, fmt.Errorf("measure %q: cutoff must be a positive integer", s)
		}
		k = v
	}
	switch strings.ToLower(name) {
	case "mrr", "rr":
		return Measure{Kind: RR, K: k}, nil
	case "recall", "r":
		if hasK {
			return Measure{Kind: Recall, K: k}, nil
		}
	case "hit", "success":
		if hasK {
			return Measure{Kind: Hit, K: k}, nil
		}
	case "ndcg":
		if hasK {
			return Measure{Kind: NDCG, K: k}, nil
		}
	case "map", "ap":
		return Measure{Kind: AP, K: k}, nil
	case "p", "precision":
		if hasK {
			return Measure{Kind: Precision, K: k}, nil
		}
	default:
		return Measure{}, fmt.Errorf("measure %q: unknown (want MRR, Recall@k, Hit@k, nDCG@k, MAP or P@k)", s)
	}
	return Measure{}, fmt.Errorf("measure %q: needs a cutoff, as in %s@10", s, name)
}

// Eval computes the measure for one query.
func (m Measure) Eval(ranking []string, rel Judgments) float64 {
	return m.evalUnique(topUnique(ranking, m.K), rel)
}

// EvalAll computes every measure for one query (the ranking is deduplicated once).
func EvalAll(measures []Measure, ranking []string, rel Judgments) []float64 {
	unique := topUnique(ranking, 0)
	out := make([]float64, len(measures))
	for i, m := range measures {
		out[i] = m.evalUnique(unique, rel)
	}
	return out
}

// evalUnique computes the measure on a ranking without repeated documents.
func (m Measure) evalUnique(unique []string, rel Judgments) float64 {
	if m.K > 0 && len(unique) > m.K {
		unique = unique[:m.K]
	}
	switch m.Kind {
	case RR:
		return reciprocalRank(unique, rel)
	case Recall:
		if m.K <= 0 {
			return 0
		}
		return recall(unique, rel)
	case Hit:
		if m.K <= 0 {
			return 0
		}
		return hit(unique, rel)
	case NDCG:
		if m.K <= 0 {
			return 0
		}
		return ndcg(unique, rel, m.K)
	case AP:
		return averagePrecision(unique, rel)
	case Precision:
		if m.K <= 0 {
			return 0
		}
		return precision(unique, rel, m.K)
	}
	panic(fmt.Sprintf("metrics: unknown measure kind %d", m.Kind))
}

// topUnique returns the first k distinct documents of ranking (all of them when k <= 0).
func topUnique(ranking []string, k int) []string {
	out := make([]string, 0, min(len(ranking), max(k, 0)))
	seen := make(map[string]bool, len(ranking))
	for _, d := range ranking {
		if k > 0 && len(out) == k {
			break
		}
		if seen[d] {
			continue
		}
		seen[d] = true
		out = append(out, d)
	}
	return out
}

// numRelevant counts the documents with a grade > 0.
func numRelevant(rel Judgments) int {
	n := 0
	for _, g := range rel {
		if g > 0 {
			n++
		}
	}
	return n
}

// ReciprocalRank is 1/r for the rank r of the first relevant document in the top k (k <= 0:
// the whole ranking), or 0 when there is none.
func ReciprocalRank(ranking []string, rel Judgments, k int) float64 {
	return Measure{Kind: RR, K: max(k, 0)}.Eval(ranking, rel)
}

// RecallAt is the fraction of the relevant documents found in the top k; 0 when the query has
// no relevant document.
func RecallAt(ranking []string, rel Judgments, k int) float64 {
	return Measure{Kind: Recall, K: k}.Eval(ranking, rel)
}

// HitAt is 1 when a relevant document is in the top k, else 0.
func HitAt(ranking []string, rel Judgments, k int) float64 {
	return Measure{Kind: Hit, K: k}.Eval(ranking, rel)
}

// NDCGAt is DCG@k / ideal DCG@k with gain = grade (grades <= 0 gain nothing) and discount
// log2(rank + 1); 0 when the query has no relevant document.
func NDCGAt(ranking []string, rel Judgments, k int) float64 {
	return Measure{Kind: NDCG, K: k}.Eval(ranking, rel)
}

// The unexported measures below take a ranking already cut at the cutoff and without repeats.

func reciprocalRank(top []string, rel Judgments) float64 {
	for i, d := range top {
		if rel[d] > 0 {
			return 1 / float64(i+1)
		}
	}
	return 0
}

func recall(top []string, rel Judgments) float64 {
	n := numRelevant(rel)
	if n == 0 {
		return 0
	}
	found := 0
	for _, d := range top {
		if rel[d] > 0 {
			found++
		}
	}
	return float64(found) / float64(n)
}

func hit(top []string, rel Judgments) float64 {
	for _, d := range top {
		if rel[d] > 0 {
			return 1
		}
	}
	return 0
}

func ndcg(top []string, rel Judgments, k int) float64 {
	var gains []int
	for _, g := range rel {
		if g > 0 {
			gains = append(gains, g)
		}
	}
	if len(gains) == 0 {
		return 0
	}
	sort.Sort(sort.Reverse(sort.IntSlice(gains)))
	ideal := 0.0
	for i := 0; i < len(gains) && i < k; i++ {
		ideal += float64(gains[i]) / math.Log2(float64(i+2))
	}
	dcg := 0.0
	for i, d := range top {
		if g := rel[d]; g > 0 {
			dcg += float64(g) / math.Log2(float64(i+2))
		}
	}
	return dcg / ideal
}

// averagePrecision is Σ over relevant documents in top of precision at their rank, divided by
// the number of relevant documents of the query (found or not).
func averagePrecision(top []string, rel Judgments) float64 {
	n := numRelevant(rel)
	if n == 0 {
		return 0
	}
	sum, found := 0.0, 0
	for i, d := range top {
		if rel[d] > 0 {
			found++
			sum += float64(found) / float64(i+1)
		}
	}
	return sum / float64(n)
}

// precision is the number of relevant documents in top divided by k.
func precision(top []string, rel Judgments, k int) float64 {
	found := 0
	for _, d := range top {
		if rel[d] > 0 {
			found++
		}
	}
	return float64(found) / float64(k)
}

// ScoredDoc is one entry of a scored run.
type ScoredDoc struct {
	ID    string
	Score float64
}

// TrecOrder turns a scored run into a ranking the way trec_eval reads a run file: by score
// descending as trec_eval stores it (float32: scores that differ only beyond float32 precision
// tie), ties by document id descending (byte-wise), each document once at its highest score.
// Writing the same ids with TrecScore's text to a TREC run file therefore gives trec_eval,
// pytrec_eval, ir_measures and ranx exactly this ranking.
func TrecOrder(run []ScoredDoc) []string {
	sorted := TrecOrderScored(run)
	out := make([]string, len(sorted))
	for i, d := range sorted {
		out[i] = d.ID
	}
	return out
}

// TrecOrderScored is TrecOrder keeping each document's (highest) score, rounded to float32 as
// trec_eval keeps it.
func TrecOrderScored(run []ScoredDoc) []ScoredDoc {
	sorted := make([]ScoredDoc, len(run))
	for i, d := range run {
		sorted[i] = ScoredDoc{ID: d.ID, Score: float64(float32(d.Score))}
	}
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].Score != sorted[j].Score {
			return sorted[i].Score > sorted[j].Score
		}
		return sorted[i].ID > sorted[j].ID
	})
	seen := make(map[string]bool, len(sorted))
	out := sorted[:0]
	for _, d := range sorted {
		if !seen[d.ID] {
			seen[d.ID] = true
			out = append(out, d)
		}
	}
	return out
}

// TrecScore formats a score for a TREC run file: the shortest decimal that reads back as the
// score's float32 value, which is what trec_eval (its sim field is a C float) and pytrec_eval
// compare. Written this way, the file ranks documents exactly as TrecOrder does.
func TrecScore(score float64) string {
	return strconv.FormatFloat(float64(float32(score)), 'g', -1, 32)
}
