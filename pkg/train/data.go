package train

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/retrieve"
)

// negativeRecord is one line of negatives.jsonl as `rated build-bench` writes it (pkg/synth).
type negativeRecord struct {
	QueryID   string `json:"query_id"`
	Positive  string `json:"positive"`
	Negatives []struct {
		ToolID string `json:"tool_id"`
		Kind   string `json:"kind"`
	} `json:"negatives"`
}

// NegativeSources counts where the examples' negatives came from.
type NegativeSources struct {
	// File is the number taken from negatives.jsonl; BM25 the number mined with BM25 (top-ranked
	// non-relevant tools); Random the number drawn uniformly from the rest of the corpus.
	File, BM25, Random int
}

// Kinds of negatives in negatives.jsonl (`rated build-bench`, pkg/synth).
const (
	NegativeHard   = "hard"
	NegativeRandom = "random"
)

// bm25Depth is how many BM25 results are scanned for hard negatives.
const bm25Depth = 50

// LoadExamples builds one example per (query, relevant document) pair of split, in qrels order,
// each with n negatives: first those of negativesPath (negatives.jsonl; "" or a missing file skips
// it) of the given kinds, kind by kind in the order of kinds and in file order within a kind (nil
// kinds: "hard" first, then every other kind), then the best BM25-ranked tools that are not
// relevant to the query, then uniformly random non-relevant tools (rng). Document texts are
// retrieve.DocText.
func LoadExamples(b *bench.Bench, split, negativesPath string, kinds []string, n int, rng *rand.Rand) ([]Example, NegativeSources, error) {
	var src NegativeSources
	if _, ok := b.Splits[split]; !ok {
		return nil, src, fmt.Errorf("benchmark has no %s split (qrels/%s.tsv)", split, split)
	}
	docs := make(map[string]bench.Doc, len(b.Corpus))
	for _, d := range b.Corpus {
		docs[d.ID] = d
	}
	fileNegs := map[[2]string][]string{}
	if negativesPath != "" {
		recs, err := readNegatives(negativesPath, docs, kinds)
		if err != nil {
			return nil, src, err
		}
		fileNegs = recs
	}
	var bm25 *retrieve.BM25
	var out []Example
	for _, q := range b.SplitQueries(split) {
		relevant := map[string]bool{}
		for _, id := range b.Relevant(split, q.ID) {
			relevant[id] = true
		}
		var mined []string
		for _, pos := range b.Relevant(split, q.ID) {
			ex := Example{QueryID: q.ID, Query: q.Text, PositiveID: pos, Positive: retrieve.DocText(docs[pos]), Relevant: relevant}
			chosen := map[string]bool{}
			add := func(id string) bool {
				if len(ex.NegativeIDs) >= n || relevant[id] || chosen[id] {
					return false
				}
				chosen[id] = true
				ex.NegativeIDs = append(ex.NegativeIDs, id)
				ex.Negatives = append(ex.Negatives, retrieve.DocText(docs[id]))
				return true
			}
			for _, id := range fileNegs[[2]string{q.ID, pos}] {
				if add(id) {
					src.File++
				}
			}
			if len(ex.NegativeIDs) < n {
				if mined == nil {
					if bm25 == nil {
						bm25 = retrieve.NewBM25(b.Corpus, retrieve.DefaultBM25Params())
					}
					cands, err := bm25.Search(q.Text, bm25Depth)
					if err != nil {
						return nil, src, fmt.Errorf("bm25 negatives for query %s: %w", q.ID, err)
					}
					mined = make([]string, 0, len(cands))
					for _, c := range cands {
						mined = append(mined, c.ID)
					}
				}
				for _, id := range mined {
					if add(id) {
						src.BM25++
					}
				}
			}
			for tries := 0; len(ex.NegativeIDs) < n && tries < 100*n+len(b.Corpus); tries++ {
				if add(b.Corpus[rng.IntN(len(b.Corpus))].ID) {
					src.Random++
				}
			}
			if len(ex.NegativeIDs) < n {
				return nil, src, fmt.Errorf("query %s: corpus too small for %d negatives", q.ID, n)
			}
			out = append(out, ex)
		}
	}
	return out, src, nil
}

// PlanBatches splits the examples, taken in the given order, into batches of size with no false
// in-batch negative: no document of a batch (positive or hard negative) is relevant to another
// query of the batch unless it is that query's own positive column, and no two examples of a batch
// share a query or a positive. An example that conflicts with the batch being filled waits for the
// next one; what cannot fill a last batch is dropped. The result is deterministic in order.
func PlanBatches(examples []Example, order []int, size int) [][]int {
	var batches [][]int
	pending := append([]int(nil), order...)
	for len(pending) >= size {
		var batch, rest []int
		for i, idx := range pending {
			if len(batch) == size {
				rest = append(rest, pending[i:]...)
				break
			}
			if conflicts(examples, batch, idx) {
				rest = append(rest, idx)
				continue
			}
			batch = append(batch, idx)
		}
		if len(batch) < size {
			break
		}
		batches = append(batches, batch)
		pending = rest
	}
	return batches
}

// conflicts reports whether example idx cannot join batch.
func conflicts(examples []Example, batch []int, idx int) bool {
	e := examples[idx]
	for _, j := range batch {
		o := examples[j]
		if o.QueryID == e.QueryID || o.PositiveID == e.PositiveID {
			return true
		}
		if isRelevant(o, e.PositiveID) || isRelevant(e, o.PositiveID) {
			return true
		}
		for _, n := range e.NegativeIDs {
			if isRelevant(o, n) {
				return true
			}
		}
		for _, n := range o.NegativeIDs {
			if isRelevant(e, n) {
				return true
			}
		}
	}
	return false
}

func isRelevant(e Example, docID string) bool {
	if e.Relevant == nil {
		return docID == e.PositiveID
	}
	return e.Relevant[docID]
}

// readNegatives reads negatives.jsonl into (query, positive) -> negative tool ids, ordered by
// kinds (see LoadExamples).
func readNegatives(path string, docs map[string]bench.Doc, kinds []string) (map[[2]string][]string, error) {
	f, err := bench.OpenFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[[2]string][]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	path = bench.OpenedName(f, path) // errors name the file read (negatives.jsonl.gz)
	out := map[[2]string][]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var r negativeRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		for _, n := range r.Negatives {
			if _, ok := docs[n.ToolID]; !ok {
				return nil, fmt.Errorf("%s:%d: negative %s is not in the corpus", path, line, n.ToolID)
			}
		}
		key := [2]string{r.QueryID, r.Positive}
		take := func(keep func(kind string) bool) { // in file order
			for _, n := range r.Negatives {
				if keep(n.Kind) {
					out[key] = append(out[key], n.ToolID)
				}
			}
		}
		if kinds == nil {
			take(func(k string) bool { return k == NegativeHard })
			take(func(k string) bool { return k != NegativeHard })
		}
		for _, want := range kinds {
			take(func(k string) bool { return k == want })
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}
