package bandit

// Candidate orders of the order-keeping baselines (Spec.Order).
const (
	// OrderRetriever walks the retriever's ranking (the paper's baselines).
	OrderRetriever = "retriever"
	// OrderCalibrated walks the candidates by their calibrated relevance, best first (ties to
	// the better-ranked): the same baseline given the relevance estimate a factored policy
	// fuses, so that what a policy gains by that estimate alone is not credited to its
	// feedback.
	OrderCalibrated = "calibrated"
)

// Static executes the retriever's ranking in order: the paper's static retriever rows (BM25,
// DRAGON…) with one attempt per step, and Retry (k) with k attempts; with byRelevance, the
// candidates by calibrated relevance instead (OrderCalibrated).
type Static struct {
	label       string
	byRelevance bool
}

// NewStatic returns the static ranking policy labelled name.
func NewStatic(name string) *Static { return &Static{label: name} }

// NewStaticOrdered returns the static policy walking the candidates in order (OrderRetriever or
// OrderCalibrated).
func NewStaticOrdered(name, order string) *Static {
	return &Static{label: name, byRelevance: order == OrderCalibrated}
}

// Name implements Policy.
func (p *Static) Name() string { return p.label }

// Choose implements Policy: the best-ranked candidate not yet tried in this step.
func (p *Static) Choose(s *Step) int {
	return firstInOrder(s, p.byRelevance, func(int) bool { return true })
}

// Observe implements Policy; a static retriever ignores feedback.
func (p *Static) Observe(*Step, int, Feedback) {}

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
func (p *PriorOnly) Choose(s *Step) int {
	p.scores = growScores(p.scores, len(s.Candidates))
	for i, c := range s.Candidates {
		p.scores[i] = p.weights.Semantic*c.Sem + p.weights.Prior*c.Prior
	}
	return argmaxAllowed(s, p.scores)
}

// Observe implements Policy; this variant ignores feedback.
func (p *PriorOnly) Observe(*Step, int, Feedback) {}

// Blacklist is the paper's health-check blacklist: the retriever's ranking, with a tool excluded
// for good after its first failed execution. If every candidate is excluded it falls back to
// the best-ranked one. A health check sees execution status only, whatever the protocol.
type Blacklist struct {
	label       string
	excluded    map[int]bool
	byRelevance bool
}

// NewBlacklist returns an empty blacklist policy.
func NewBlacklist(name string) *Blacklist { return &Blacklist{label: name, excluded: map[int]bool{}} }

// NewBlacklistOrdered returns an empty blacklist policy walking the candidates in order
// (OrderRetriever or OrderCalibrated).
func NewBlacklistOrdered(name, order string) *Blacklist {
	p := NewBlacklist(name)
	p.byRelevance = order == OrderCalibrated
	return p
}

// Name implements Policy.
func (p *Blacklist) Name() string { return p.label }

// Choose implements Policy.
func (p *Blacklist) Choose(s *Step) int {
	return firstInOrder(s, p.byRelevance, func(i int) bool { return !p.excluded[s.Candidates[i].Tool] })
}

// Observe implements Policy.
func (p *Blacklist) Observe(s *Step, pos int, fb Feedback) {
	if !fb.Executed {
		p.excluded[s.Candidates[pos].Tool] = true
	}
}
