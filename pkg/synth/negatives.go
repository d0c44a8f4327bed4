package synth

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/retrieve"
)

// Negative is one negative tool for a (query, positive tool) pair.
type Negative struct {
	ToolID string `json:"tool_id"`
	// Kind is "hard" (ranked high by the retriever for the query) or "random".
	Kind string `json:"kind"`
	// Rank and Score are the retriever's rank (1-based) and score for a hard negative.
	Rank  int     `json:"rank,omitempty"`
	Score float64 `json:"score,omitempty"`
}

// NegativeRecord is one line of negatives.jsonl: the negatives of one positive pair.
type NegativeRecord struct {
	QueryID   string     `json:"query_id"`
	Positive  string     `json:"positive"`
	Negatives []Negative `json:"negatives"`
}

// NegativeConfig says how many negatives of each kind each positive pair gets. The paper has two
// negatives per positive (70,122 positive and 140,244 negative pairs): one hard and one random by
// default.
type NegativeConfig struct {
	Hard   int
	Random int
	// Depth is how many retriever results are scanned for hard negatives (default 50).
	Depth int
}

// MineNegatives picks the negatives of one positive pair. Hard negatives are the best-ranked
// tools under r for the query text that are not among the query's positives (with a dense
// retriever: the highest cosine similarity; with a lexical one, only tools scoring > 0); random
// negatives are
// drawn uniformly from the remaining tools (neither positive nor already chosen), with rng.
// toolIDs is the whole corpus in corpus order. When the corpus is too small, fewer negatives are
// returned.
func MineNegatives(r retrieve.Retriever, query string, positives map[string]bool, toolIDs []string, cfg NegativeConfig, rng *rand.Rand) ([]Negative, error) {
	depth := negativeDepth(cfg)
	chosen := map[string]bool{}
	var out []Negative
	if cfg.Hard > 0 {
		cands, err := r.Search(query, depth+len(positives))
		if err != nil {
			return nil, fmt.Errorf("hard negatives for %q: %w", query, err)
		}
		// A lexical score <= 0 is no evidence of similarity (BM25 ranks such matches last, on
		// terms in half the corpus or more): not a hard negative. Cosines rank at any sign.
		lexical := !IsCosineRetriever(r.Name())
		for i, c := range cands {
			if len(out) == cfg.Hard || (lexical && c.Score <= 0) {
				break
			}
			if positives[c.ID] || chosen[c.ID] {
				continue
			}
			chosen[c.ID] = true
			out = append(out, Negative{ToolID: c.ID, Kind: "hard", Rank: i + 1, Score: c.Score})
		}
	}
	var pool []string
	for _, id := range toolIDs {
		if !positives[id] && !chosen[id] {
			pool = append(pool, id)
		}
	}
	for k := 0; k < cfg.Random && len(pool) > 0; k++ {
		i := rng.IntN(len(pool))
		out = append(out, Negative{ToolID: pool[i], Kind: "random"})
		pool[i] = pool[len(pool)-1]
		pool = pool[:len(pool)-1]
	}
	return out, nil
}

// negativeDepth is cfg.Depth, or 50 when unset.
func negativeDepth(cfg NegativeConfig) int {
	if cfg.Depth <= 0 {
		return 50
	}
	return cfg.Depth
}

// SplitByText assigns each distinct text to a split so that no text is in two splits: the texts
// are sorted, shuffled with a generator seeded by seed, and cut in the given fractions (in the
// order of names; the last split takes the remainder). The assignment depends only on the set of
// texts and the seed, not on their input order.
func SplitByText(texts []string, names []string, fractions []float64, seed uint64) (map[string]string, error) {
	if len(names) != len(fractions) || len(names) == 0 {
		return nil, fmt.Errorf("split: %d names for %d fractions", len(names), len(fractions))
	}
	sum := 0.0
	for _, f := range fractions {
		if f < 0 {
			return nil, fmt.Errorf("split: negative fraction %g", f)
		}
		sum += f
	}
	if sum <= 0 {
		return nil, fmt.Errorf("split: fractions sum to %g", sum)
	}
	uniq := map[string]bool{}
	var distinct []string
	for _, t := range texts {
		if !uniq[t] {
			uniq[t] = true
			distinct = append(distinct, t)
		}
	}
	sort.Strings(distinct)
	rng := rand.New(rand.NewPCG(seed, 0x5eed5))
	rng.Shuffle(len(distinct), func(i, j int) { distinct[i], distinct[j] = distinct[j], distinct[i] })
	out := make(map[string]string, len(distinct))
	n := len(distinct)
	start := 0
	acc := 0.0
	for k, name := range names {
		acc += fractions[k]
		end := int(float64(n)*acc/sum + 0.5)
		if k == len(names)-1 {
			end = n
		}
		for i := start; i < end; i++ {
			out[distinct[i]] = name
		}
		if end > start {
			start = end
		}
	}
	return out, nil
}

// QueryID is the stable id of a query text: a prefix and the first 12 hex digits of its SHA-256.
func QueryID(prefix, text string) string {
	h := sha256.Sum256([]byte(text))
	return fmt.Sprintf("%s-%x", prefix, h[:6])
}

// subSeed derives an independent seed for one item (a tool, a query) from the run's seed.
func subSeed(seed int64, key string) int64 {
	h := sha256.New()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(seed))
	h.Write(b[:])
	h.Write([]byte(key))
	sum := h.Sum(nil)
	// Kept below 2^31: some servers read the seed as a 32-bit integer.
	return int64(binary.LittleEndian.Uint64(sum[:8]) % (1 << 31))
}

// CheckPlatforms refuses a platform that no tool of the catalog has (matched as SampleTools
// does, ignoring case and surrounding space): SampleTools drops it silently, and a misspelled
// platform beside good ones gave a benchmark without it. The error lists the catalog's platforms.
func CheckPlatforms(tools []catalog.Tool, platforms []string) error {
	have := map[string]bool{}
	for _, t := range tools {
		have[strings.ToLower(t.Platform)] = true
	}
	for _, p := range platforms {
		if !have[strings.ToLower(strings.TrimSpace(p))] {
			return fmt.Errorf("--platforms %q: no tool of the catalog is on that platform (platforms: %s)", p, strings.Join(slices.Sorted(maps.Keys(have)), ", "))
		}
	}
	return nil
}

// SampleTools selects the tools a run works on: only the given platforms (all when empty), at
// most perPlatform of each platform (all when 0), then at most n in all (all when 0). Sampling is
// uniform without replacement with the seed, and the result keeps catalog order, so the same
// catalog, limits and seed always give the same tools.
func SampleTools(tools []catalog.Tool, n int, platforms []string, perPlatform int, seed uint64) []catalog.Tool {
	allowed := map[string]bool{}
	for _, p := range platforms {
		allowed[strings.ToLower(strings.TrimSpace(p))] = true
	}
	rng := rand.New(rand.NewPCG(seed, 0x7001))
	byPlatform := map[string][]int{}
	var order []string
	for i, t := range tools {
		p := strings.ToLower(t.Platform)
		if len(allowed) > 0 && !allowed[p] {
			continue
		}
		if _, ok := byPlatform[p]; !ok {
			order = append(order, p)
		}
		byPlatform[p] = append(byPlatform[p], i)
	}
	var picked []int
	for _, p := range order {
		idx := byPlatform[p]
		if perPlatform > 0 && len(idx) > perPlatform {
			rng.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
			idx = idx[:perPlatform]
		}
		picked = append(picked, idx...)
	}
	if n > 0 && len(picked) > n {
		sort.Ints(picked)
		rng.Shuffle(len(picked), func(a, b int) { picked[a], picked[b] = picked[b], picked[a] })
		picked = picked[:n]
	}
	sort.Ints(picked)
	out := make([]catalog.Tool, len(picked))
	for i, k := range picked {
		out[i] = tools[k]
	}
	return out
}
