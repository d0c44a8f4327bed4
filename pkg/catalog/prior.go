package catalog

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// PriorConfig holds the weights of the static metadata prior. The paper uses (0.5, 0.3, 0.2) for
// consistency, source and quality, and 0.6/0.4 for description and tag length inside quality.
type PriorConfig struct {
	ConsistencyWeight float64            `yaml:"consistency_weight" json:"consistency_weight"`
	SourceWeight      float64            `yaml:"source_weight" json:"source_weight"`
	QualityWeight     float64            `yaml:"quality_weight" json:"quality_weight"`
	DescriptionShare  float64            `yaml:"description_share" json:"description_share"`
	TagShare          float64            `yaml:"tag_share" json:"tag_share"`
	SourceWeights     map[string]float64 `yaml:"source_weights" json:"source_weights"`
}

// PaperPriorConfig returns the prior settings of the RATED paper.
func PaperPriorConfig() PriorConfig {
	return PriorConfig{
		ConsistencyWeight: 0.5, SourceWeight: 0.3, QualityWeight: 0.2,
		DescriptionShare: 0.6, TagShare: 0.4,
		SourceWeights: map[string]float64{
			"official":         1.0,
			PlatformLangChain:  0.9,
			PlatformCrewAI:     0.9,
			PlatformLlamaIndex: 0.9,
			PlatformN8n:        0.8,
			"other":            0.6,
		},
	}
}

// Validate checks that the weights are non-negative and each group sums to 1.
func (c PriorConfig) Validate() error {
	for k, v := range map[string]float64{
		"prior.consistency_weight": c.ConsistencyWeight, "prior.source_weight": c.SourceWeight,
		"prior.quality_weight": c.QualityWeight, "prior.description_share": c.DescriptionShare,
		"prior.tag_share": c.TagShare,
	} {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("%s must be a finite number >= 0, got %v", k, v)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(c.SourceWeights)) {
		if v := c.SourceWeights[k]; !(v >= 0 && v <= 1) {
			return fmt.Errorf("prior.source_weights.%s = %v: a source weight must be in [0, 1]", k, v)
		}
	}
	if s := c.ConsistencyWeight + c.SourceWeight + c.QualityWeight; math.Abs(s-1) > 1e-9 {
		return fmt.Errorf("prior weights (consistency_weight, source_weight, quality_weight) must sum to 1, got %v", s)
	}
	if s := c.DescriptionShare + c.TagShare; math.Abs(s-1) > 1e-9 {
		return fmt.Errorf("prior.description_share + prior.tag_share must sum to 1, got %v", s)
	}
	return nil
}

// Similarity scores how well two texts agree, in [-1, 1] (a cosine). Name says which method it
// is, so outputs can record whether a sentence encoder or the lexical fallback was used.
type Similarity interface {
	Name() string
	Similarity(a, b string) (float64, error)
}

// BatchSimilarity is a Similarity that scores many pairs in one call (a sentence encoder embeds
// all the texts in one sorted, batched pass instead of one small call per pair).
type BatchSimilarity interface {
	Similarity
	// Similarities returns the similarity of a[i] and b[i] for every i.
	Similarities(a, b []string) ([]float64, error)
}

// LexicalSimilarity is the fallback name–description consistency used when no sentence encoder is
// installed: the cosine between the binary bag-of-words of the two texts after splitting
// identifiers (camelCase, snake_case), lower-casing and a crude 5-letter prefix stem.
type LexicalSimilarity struct{}

// Name implements Similarity.
func (LexicalSimilarity) Name() string { return "lexical-cosine" }

// Similarity implements Similarity.
func (LexicalSimilarity) Similarity(a, b string) (float64, error) {
	ta, tb := stemSet(a), stemSet(b)
	if len(ta) == 0 || len(tb) == 0 {
		return 0, nil
	}
	common := 0
	for w := range ta {
		if tb[w] {
			common++
		}
	}
	return float64(common) / math.Sqrt(float64(len(ta))*float64(len(tb))), nil
}

// stemSet splits identifiers and prose into lower-case 5-letter stems, dropping stop words.
func stemSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range SplitIdentifierWords(s) {
		if len(w) < 2 || stopWords[w] {
			continue
		}
		if len(w) > 5 {
			w = w[:5]
		}
		out[w] = true
	}
	return out
}

var stopWords = map[string]bool{
	"the": true, "a": true, "an": true, "and": true, "or": true, "of": true, "to": true, "in": true,
	"for": true, "on": true, "with": true, "is": true, "it": true, "this": true, "that": true,
	"by": true, "be": true, "as": true, "at": true, "from": true, "use": true, "tool": true,
}

// SplitIdentifierWords splits text into lower-case words, also breaking camelCase and snake_case
// identifiers ("getHTTPResponse_code" -> get, http, response, code).
func SplitIdentifierWords(s string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if unicode.IsUpper(r) && len(cur) > 0 {
				prev := rs[i-1]
				nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
				if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
					flush()
				}
			}
			cur = append(cur, r)
		default:
			flush()
		}
	}
	flush()
	return words
}

// ComputePriors sets Tool.Prior for every tool: r = wc·consistency + ws·source + wq·quality.
// Quality compares description and tag-string lengths with their catalog medians:
// q = d·σ(len/median − 1) + t·σ(tags/median − 1), so a field at the median contributes 0.5 and
// a missing one σ(−1) ≈ 0.27. Consistency is clamped to [0, 1] since a negative cosine carries
// no more evidence than zero.
func ComputePriors(tools []Tool, cfg PriorConfig, sim Similarity) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if sim == nil {
		sim = LexicalSimilarity{}
	}
	descLens := make([]float64, len(tools))
	tagLens := make([]float64, len(tools))
	for i := range tools {
		descLens[i] = float64(len([]rune(tools[i].Description)))
		tagLens[i] = float64(len([]rune(strings.Join(tools[i].Tags, " "))))
	}
	medDesc, medTag := median(descLens), median(tagLens)
	var batch []float64
	if bs, ok := sim.(BatchSimilarity); ok && len(tools) > 0 {
		names, descs := make([]string, len(tools)), make([]string, len(tools))
		for i := range tools {
			names[i], descs[i] = humanName(tools[i].Name), tools[i].Description
		}
		var err error
		if batch, err = bs.Similarities(names, descs); err != nil {
			return fmt.Errorf("prior consistency of %d tools: %w", len(tools), err)
		}
		if len(batch) != len(tools) {
			return fmt.Errorf("prior consistency: %s returned %d values for %d tools", sim.Name(), len(batch), len(tools))
		}
	}
	for i := range tools {
		t := &tools[i]
		var c float64
		if batch != nil {
			c = batch[i]
		} else {
			var err error
			if c, err = sim.Similarity(humanName(t.Name), t.Description); err != nil {
				return fmt.Errorf("prior consistency for %s: %w", t.ID, err)
			}
		}
		// A NaN passes math.Max/Min unchanged and would surface only when the catalog is encoded.
		if math.IsNaN(c) || math.IsInf(c, 0) {
			return fmt.Errorf("prior consistency for %s: %s returned %v", t.ID, sim.Name(), c)
		}
		c = math.Max(0, math.Min(1, c))
		src := SourceWeightOf(t, cfg)
		q := cfg.DescriptionShare*logistic(ratio(descLens[i], medDesc)-1) +
			cfg.TagShare*logistic(ratio(tagLens[i], medTag)-1)
		t.Prior = &PriorScore{
			Value:             cfg.ConsistencyWeight*c + cfg.SourceWeight*src + cfg.QualityWeight*q,
			Consistency:       c,
			ConsistencyMethod: sim.Name(),
			SourceWeight:      src,
			Quality:           q,
		}
	}
	return nil
}

// SourceWeightOf returns the configured source weight of a tool: "official" when the tool is from
// an official vendor list, else its platform's weight, else "other".
func SourceWeightOf(t *Tool, cfg PriorConfig) float64 {
	if t.Official {
		if w, ok := cfg.SourceWeights["official"]; ok {
			return w
		}
	}
	if w, ok := cfg.SourceWeights[strings.ToLower(t.Platform)]; ok {
		return w
	}
	return cfg.SourceWeights["other"]
}

// humanName turns identifiers into words so that "get_weather" can be compared with prose.
func humanName(name string) string { return strings.Join(SplitIdentifierWords(name), " ") }

func ratio(x, med float64) float64 {
	if med <= 0 {
		if x > 0 {
			return 2
		}
		return 1
	}
	return x / med
}

func logistic(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
