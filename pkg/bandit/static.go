package bandit

// Static always executes the retriever's top-1: the paper's static retriever rows (BM25, DRAGON…).
type Static struct{ label string }

// NewStatic returns the static top-1 policy labelled name.
func NewStatic(name string) *Static { return &Static{label: name} }

// Name implements Policy.
func (p *Static) Name() string { return p.label }

// Choose implements Policy.
func (p *Static) Choose(s *Step) []int { return []int{0} }

// Observe implements Policy; a static retriever ignores feedback.
func (p *Static) Observe(*Step, int, bool) {}

// PriorOnly ranks by w1·S_sem + w3·r_static: RATED without feedback (w2's term is dropped).
type PriorOnly struct {
	label   string
	weights FusionWeights
	scores  []float64
}

// NewPriorOnly returns RATED w/o feedback.
func NewPriorOnly(name string, w FusionWeights) *PriorOnly {
	return &PriorOnly{label: name, weights: w}
}

// Name implements Policy.
func (p *PriorOnly) Name() string { return p.label }

// Choose implements Policy.
func (p *PriorOnly) Choose(s *Step) []int {
	p.scores = growScores(p.scores, len(s.Candidates))
	for i, c := range s.Candidates {
		p.scores[i] = p.weights.Semantic*c.Sem + p.weights.Prior*c.Prior
	}
	return []int{argmax(p.scores)}
}

// Observe implements Policy; this variant ignores feedback.
func (p *PriorOnly) Observe(*Step, int, bool) {}

// Blacklist is the paper's health-check blacklist: the retriever's ranking, with a tool excluded
// for good after its first failure. If every candidate is excluded it falls back to the top-1.
type Blacklist struct {
	label    string
	excluded map[int]bool
}

// NewBlacklist returns an empty blacklist policy.
func NewBlacklist(name string) *Blacklist { return &Blacklist{label: name, excluded: map[int]bool{}} }

// Name implements Policy.
func (p *Blacklist) Name() string { return p.label }

// Choose implements Policy.
func (p *Blacklist) Choose(s *Step) []int {
	for i, c := range s.Candidates {
		if !p.excluded[c.Tool] {
			return []int{i}
		}
	}
	return []int{0}
}

// Observe implements Policy.
func (p *Blacklist) Observe(s *Step, pos int, success bool) {
	if !success {
		p.excluded[s.Candidates[pos].Tool] = true
	}
}

// Retry tries up to K candidates in rank order within one step and keeps no memory across steps.
type Retry struct {
	label string
	K     int
	order []int
}

// NewRetry returns the retry policy with k attempts per step.
func NewRetry(name string, k int) *Retry { return &Retry{label: name, K: k} }

// Name implements Policy.
func (p *Retry) Name() string { return p.label }

// Choose implements Policy.
func (p *Retry) Choose(s *Step) []int {
	n := min(p.K, len(s.Candidates))
	p.order = p.order[:0]
	for i := 0; i < n; i++ {
		p.order = append(p.order, i)
	}
	return p.order
}

// Observe implements Policy; retry has no memory across steps.
func (p *Retry) Observe(*Step, int, bool) {}
