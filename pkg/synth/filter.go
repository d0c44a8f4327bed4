package synth

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// WordCount is the number of whitespace-separated words of a query, the unit of the paper's
// 5-120 word length filter.
func WordCount(s string) int { return len(strings.Fields(s)) }

// Jaccard is |A∩B| / |A∪B| over the word sets of a and b (wordTokens: lower-cased maximal runs
// of letters and digits; punctuation separates words and is dropped). Two texts without any word
// have similarity 1.
func Jaccard(a, b string) float64 {
	sa, sb := wordSet(wordTokens(a)), wordSet(wordTokens(b))
	return jaccardSets(sa, sb)
}

func wordSet(tokens []string) map[string]struct{} {
	s := make(map[string]struct{}, len(tokens))
	for _, t := range tokens {
		s[t] = struct{}{}
	}
	return s
}

func jaccardSets(a, b map[string]struct{}) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	inter := 0
	for t := range a {
		if _, ok := b[t]; ok {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// Deduper drops near-duplicates: a text is kept only if its word-set Jaccard similarity with every
// text kept before it is at most the threshold (the paper removes pairs above 0.7). It finds the
// candidates with prefix filtering, so n texts cost far less than n² comparisons: two sets with
// Jaccard > t share at least one word among the first |A| − ⌈t·|A|⌉ + 1 words of each, in a fixed
// global word order. The order here is first-seen order, which is valid for any fixed order.
type Deduper struct {
	threshold float64
	rank      map[string]int
	kept      []map[string]struct{}
	sizes     []int
	index     map[string][]int
}

// NewDeduper returns a deduper that drops texts with Jaccard > threshold to a kept one.
func NewDeduper(threshold float64) (*Deduper, error) {
	if threshold <= 0 || threshold >= 1 {
		return nil, fmt.Errorf("dedupe threshold %g must be in (0, 1)", threshold)
	}
	return &Deduper{threshold: threshold, rank: map[string]int{}, index: map[string][]int{}}, nil
}

// Add reports whether text is kept (no kept text is more similar than the threshold) and, if so,
// remembers it. When it is dropped, dupOf is the index (in keep order) of a kept text it
// duplicates.
func (d *Deduper) Add(text string) (kept bool, dupOf int) {
	set := wordSet(wordTokens(text))
	words := make([]string, 0, len(set))
	for w := range set {
		if _, ok := d.rank[w]; !ok {
			d.rank[w] = len(d.rank)
		}
		words = append(words, w)
	}
	sort.Slice(words, func(i, j int) bool { return d.rank[words[i]] < d.rank[words[j]] })
	n := len(words)
	// Prefix length so that any set with Jaccard > t to this one shares a word in it.
	prefix := n - int(math.Ceil(d.threshold*float64(n))) + 1
	if prefix > n {
		prefix = n
	}
	seen := map[int]bool{}
	check := func(j int) bool {
		if seen[j] {
			return false
		}
		seen[j] = true
		// Size filter: Jaccard ≤ min/max.
		lo, hi := n, d.sizes[j]
		if lo > hi {
			lo, hi = hi, lo
		}
		if hi > 0 && float64(lo)/float64(hi) <= d.threshold {
			return false
		}
		return jaccardSets(set, d.kept[j]) > d.threshold
	}
	if n == 0 {
		for j, s := range d.sizes {
			if s == 0 {
				return false, j
			}
		}
	}
	for _, w := range words[:max(prefix, 0)] {
		for _, j := range d.index[w] {
			if check(j) {
				return false, j
			}
		}
	}
	id := len(d.kept)
	d.kept = append(d.kept, set)
	d.sizes = append(d.sizes, n)
	// Index the kept set under every word, not only its prefix: a later set's prefix may hold a
	// word that lies outside this set's prefix in the (growing) first-seen order.
	for _, w := range words {
		d.index[w] = append(d.index[w], id)
	}
	return true, -1
}
