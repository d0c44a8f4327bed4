package bandit

import (
	"math"
	"slices"

	"github.com/rated-dev/rated/internal/vecmath"
	"gonum.org/v1/gonum/floats"
)

// RelevanceModel estimates how likely each candidate is to serve the query: P(relevant | query,
// tool), exploration bonus included. It learns only from observed relevance (task or judged
// feedback on a tool that executed); execution failures say nothing about relevance and never
// reach it.
type RelevanceModel interface {
	// Scores fills out with the estimate of every candidate of s.
	Scores(s *Step, out []float64)
	// Learn records that the candidate at pos, executed in step s, served the query or not.
	Learn(s *Step, pos int, relevant bool)
}

// FrozenRelevance is the frozen retriever's view: the calibrated probability of relevance of
// each candidate (Candidate.Relevance), or its raw semantic score when Semantic is set.
type FrozenRelevance struct{ Semantic bool }

// Scores implements RelevanceModel.
func (m FrozenRelevance) Scores(s *Step, out []float64) {
	for i, c := range s.Candidates {
		if m.Semantic {
			out[i] = c.Sem
		} else {
			out[i] = c.Relevance
		}
	}
}

// Learn implements RelevanceModel; a frozen model learns nothing.
func (FrozenRelevance) Learn(*Step, int, bool) {}

// ResidualLinUCB learns, per tool, a linear correction of the calibrated relevance from
// observed relevance: estimate = P₀ + θᵀx̃ + α·√(x̃ᵀA⁻¹x̃), where P₀ = Candidate.Relevance and θ
// is fitted (discounted ridge, diagonal A, as RATED's bandit) to the residuals y − P₀. With no
// observation θ = 0 and the model ranks exactly as the calibrated retriever; relevance does not
// drift with availability because execution outcomes never reach it.
type ResidualLinUCB struct {
	lin *DiscountedLinUCB
}

// NewResidualLinUCB returns the model for d-dimensional contexts. cfg's Weights and PriorInit
// are ignored.
func NewResidualLinUCB(cfg LinUCBConfig, numTools, d int) *ResidualLinUCB {
	cfg.Weights = FusionWeights{Bandit: 1}
	cfg.PriorInit = "intercept"
	return &ResidualLinUCB{lin: NewDiscountedLinUCB("relevance", cfg, numTools, d)}
}

// Scores implements RelevanceModel.
func (m *ResidualLinUCB) Scores(s *Step, out []float64) {
	m.lin.loadContext(s)
	for i, c := range s.Candidates {
		out[i] = c.Relevance + m.lin.banditScore(c.Tool, 0)
	}
}

// Learn implements RelevanceModel.
func (m *ResidualLinUCB) Learn(s *Step, pos int, relevant bool) {
	c := s.Candidates[pos]
	y := 0.0
	if relevant {
		y = 1
	}
	m.lin.loadContext(s)
	c.Prior = 0 // the arm's intercept starts at a zero residual
	m.lin.update(s, c, y-c.Relevance)
}

// clamp01 limits v to [0, 1].
func clamp01(v float64) float64 { return math.Max(0, math.Min(1, v)) }

// KernelRelevance estimates P(relevant | query, tool) from the tool's past relevance outcomes
// on similar queries: a Bayesian kernel smoother with the calibrated relevance as its prior,
//
//	P = (κ·P₀ + Σₖ wₖ·sₖ) / (κ + Σₖ wₖ·nₖ),  wₖ = exp((xᵀcₖ − 1)/h)
//
// over the tool's prototypes cₖ (query contexts seen with it, merged above a cosine of Merge,
// with nₖ observations and sₖ successes), plus an exploration bonus α/√(κ + Σₖ wₖ·nₖ). A query
// seen before weighs 1; a query at cosine 1 − h weighs e⁻¹. Prototypes per tool are capped at
// MaxPrototypes (at the cap a new query is merged into its nearest prototype, however far),
// which bounds the cost of a
// decision at K·MaxPrototypes dot products, or Hamming distances between sign sketches
// (KernelConfig.Sketch); the bandwidth h may be chosen among candidates as outcomes arrive
// (KernelConfig.Bandwidths).
type KernelRelevance struct {
	cfg   KernelConfig
	tools [][]prototype
	// The candidate bandwidths, each one's prequential log-loss on the outcomes learned so
	// far, and the one in use (the lowest loss).
	bandwidths []float64
	loss       []float64
	sel        int
	// Sign sketches (Sketch "sign"): per tool, the sketches of its prototypes (words uint64s
	// each, in vecmath.HammingBlocks' blocks of eight), and, for contexts of dimension dim, the
	// cosine and each candidate bandwidth's kernel weight by Hamming distance.
	signs   [][]uint64
	words   int
	dim     int
	weights [][]float64
	cosine  []float64
	query   []uint64  // the sketch of the context being scored
	dist    []uint64  // scratch: Hamming distances of one tool's prototypes
	sketch  []uint64  // scratch: one prototype's sketch
	sims    []float64 // scratch (exact kernel): cosines of one tool's prototypes with the context
}

// KernelConfig configures KernelRelevance.
type KernelConfig struct {
	// Strength κ of the calibrated prior, in observations.
	Strength float64
	// Bandwidth h of the kernel, in cosine.
	Bandwidth float64
	// Bandwidths, when set, replaces Bandwidth by candidates chosen among as outcomes arrive:
	// before each learned outcome every candidate's estimate for that tool and query is scored
	// by its log-loss, and the model uses the candidate with the lowest total so far (the first
	// while they tie). Queries that come back often favour a narrow kernel, a stream of new
	// queries a wide one.
	Bandwidths []float64
	// Merge is the cosine above which a query joins an existing prototype.
	Merge float64
	// MaxPrototypes per tool (0: 64).
	MaxPrototypes int
	// Alpha is the exploration coefficient.
	Alpha float64
	// Dim is the dimension of the query contexts (0: not known); a snapshot whose prototypes
	// have another is refused.
	Dim int
	// Sketch "sign" evaluates the kernel on one bit per coordinate (the sign of the context and
	// of each prototype) instead of the float dot product: cosine is read from the Hamming
	// distance h as cos(π·h/d), as for random-hyperplane sketches. It reads 1/64 of the memory
	// per term; a context seen before still weighs 1. "" evaluates the exact kernel.
	Sketch string
}

type prototype struct {
	c    []float64
	n, s float64
}

// NewKernelRelevance returns the model.
func NewKernelRelevance(cfg KernelConfig) *KernelRelevance {
	if cfg.MaxPrototypes <= 0 {
		cfg.MaxPrototypes = 64
	}
	bws := slices.Clone(cfg.Bandwidths)
	if len(bws) == 0 {
		bws = []float64{cfg.Bandwidth}
	}
	return &KernelRelevance{cfg: cfg, bandwidths: bws, loss: make([]float64, len(bws))}
}

// Bandwidth returns the bandwidth in use: the configured one, or the candidate with the lowest
// prequential log-loss.
func (m *KernelRelevance) Bandwidth() float64 { return m.bandwidths[m.sel] }

// Scores implements RelevanceModel.
func (m *KernelRelevance) Scores(s *Step, out []float64) {
	if m.cfg.Sketch != "" {
		m.sketchQuery(s.Context)
	}
	for i, c := range s.Candidates {
		n, sum := m.evidence(c.Tool, s.Context)
		k := m.cfg.Strength
		out[i] = (k*c.Relevance+sum)/(k+n) + m.cfg.Alpha/math.Sqrt(k+n)
	}
}

// evidence returns the kernel-weighted observation and success counts of tool near x, with
// the bandwidth in use.
func (m *KernelRelevance) evidence(tool int, x []float64) (n, s float64) {
	return m.evidenceWith(tool, x, m.sel)
}

// evidenceWith is evidence with candidate bandwidth b.
func (m *KernelRelevance) evidenceWith(tool int, x []float64, b int) (n, s float64) {
	if tool >= len(m.tools) {
		return 0, 0
	}
	if m.cfg.Sketch != "" {
		if len(m.tools[tool]) == 0 {
			return 0, 0
		}
		return weighSketched(m.tools[tool], m.distances(tool), m.weights[b])
	}
	return weighExact(m.tools[tool], m.similarities(tool, x), m.bandwidths[b])
}

// similarities returns the cosine of x with each prototype of tool (the exact kernel).
func (m *KernelRelevance) similarities(tool int, x []float64) []float64 {
	m.sims = m.sims[:0]
	for _, p := range m.tools[tool] {
		m.sims = append(m.sims, dot(x, p.c))
	}
	return m.sims
}

// weighExact returns the counts of protos weighted by exp((cos − 1)/bw), cos each one's cosine
// with the context in sims.
func weighExact(protos []prototype, sims []float64, bw float64) (n, s float64) {
	for k, p := range protos {
		w := math.Exp((sims[k] - 1) / bw)
		n += w * p.n
		s += w * p.s
	}
	return n, s
}

// weighSketched returns the counts of protos weighted by weight[h], h each one's Hamming
// distance in dist.
func weighSketched(protos []prototype, dist []uint64, weight []float64) (n, s float64) {
	dist = dist[:len(protos)]
	// Two sums each, so that consecutive terms do not wait on one another's addition.
	var n2, s2 float64
	k := 0
	for ; k+1 < len(protos); k += 2 {
		w0, w1 := weight[dist[k]], weight[dist[k+1]]
		n += w0 * protos[k].n
		s += w0 * protos[k].s
		n2 += w1 * protos[k+1].n
		s2 += w1 * protos[k+1].s
	}
	if k < len(protos) {
		w := weight[dist[k]]
		n += w * protos[k].n
		s += w * protos[k].s
	}
	return n + n2, s + s2
}

// Learn implements RelevanceModel.
func (m *KernelRelevance) Learn(s *Step, pos int, relevant bool) {
	tool := s.Candidates[pos].Tool
	m.tools = grow(m.tools, tool)
	y := 0.0
	if relevant {
		y = 1
	}
	// How near each of the tool's prototypes is, computed once for the bandwidths' scores and
	// the nearest prototype: Hamming distances on sketches, cosines otherwise.
	var dist []uint64
	var sims []float64
	if m.cfg.Sketch != "" {
		m.sketchQuery(s.Context)
		m.signs = grow(m.signs, tool)
		if len(m.tools[tool]) > 0 {
			dist = m.distances(tool)
		}
	} else {
		sims = m.similarities(tool, s.Context)
	}
	if len(m.bandwidths) > 1 {
		m.scoreBandwidths(tool, dist, sims, s.Candidates[pos].Relevance, relevant)
	}
	protos := m.tools[tool]
	best, bestSim := -1, math.Inf(-1)
	for i := range protos {
		var v float64
		if m.cfg.Sketch != "" {
			v = m.cosine[dist[i]]
		} else {
			v = sims[i]
		}
		if v > bestSim {
			best, bestSim = i, v
		}
	}
	if best >= 0 && (bestSim >= m.cfg.Merge || len(protos) >= m.cfg.MaxPrototypes) {
		p := &protos[best]
		mergeInto(p.c, s.Context, p.n, 1)
		p.n++
		p.s += y
		if m.cfg.Sketch != "" {
			m.setSketch(tool, best, p.c)
		}
		return
	}
	m.tools[tool] = append(protos, prototype{c: append([]float64(nil), s.Context...), n: 1, s: y})
	if m.cfg.Sketch != "" {
		m.setSketch(tool, len(protos), s.Context)
	}
}

// scoreBandwidths adds to each candidate bandwidth's loss the log-loss of its estimate (without
// the exploration bonus) for tool, whose calibrated relevance is p0, given the outcome, and
// selects the candidate with the lowest loss. dist (sketches; nil when the tool has no
// prototype) or sims (exact kernel) say how near the context each prototype is.
func (m *KernelRelevance) scoreBandwidths(tool int, dist []uint64, sims []float64, p0 float64, relevant bool) {
	const eps = 1e-6
	k := m.cfg.Strength
	for b, bw := range m.bandwidths {
		var n, sum float64
		switch {
		case m.cfg.Sketch == "":
			n, sum = weighExact(m.tools[tool], sims, bw)
		case dist != nil:
			n, sum = weighSketched(m.tools[tool], dist, m.weights[b])
		}
		p := math.Min(1-eps, math.Max(eps, (k*clamp01(p0)+sum)/(k+n)))
		if relevant {
			m.loss[b] -= math.Log(p)
		} else {
			m.loss[b] -= math.Log1p(-p)
		}
	}
	m.sel = 0
	for b, l := range m.loss {
		if l < m.loss[m.sel] {
			m.sel = b
		}
	}
}

// distances returns the Hamming distance from m.query to each prototype sketch of tool (and
// zeros for the unused slots of its last block).
func (m *KernelRelevance) distances(tool int) []uint64 {
	nb := (len(m.tools[tool]) + vecmath.HammingBlockSize - 1) / vecmath.HammingBlockSize
	if need := nb * vecmath.HammingBlockSize; len(m.dist) < need {
		m.dist = make([]uint64, need)
	}
	vecmath.HammingBlocks(m.query, m.signs[tool], nb, m.dist)
	return m.dist
}

// setSketch stores the sign sketch of c as prototype k of tool, in the word-interleaved blocks
// of eight that vecmath.HammingBlocks reads (a new block when k starts one).
func (m *KernelRelevance) setSketch(tool, k int, c []float64) {
	const bs = vecmath.HammingBlockSize
	block, lane := k/bs, k%bs
	if need := (block + 1) * m.words * bs; len(m.signs[tool]) < need {
		m.signs[tool] = append(m.signs[tool], make([]uint64, need-len(m.signs[tool]))...)
	}
	vecmath.SignBits(c, m.sketch)
	for j, word := range m.sketch {
		m.signs[tool][(block*m.words+j)*bs+lane] = word
	}
}

// sketchQuery sets m.query to the sign sketch of x, (re)building the weight tables when x's
// dimension is new.
func (m *KernelRelevance) sketchQuery(x []float64) {
	if len(x) != m.dim {
		m.setDim(len(x))
	}
	vecmath.SignBits(x, m.query)
}

// setDim sizes the sketches for contexts of dimension d and tabulates, for every Hamming
// distance h, the cosine cos(π·h/d) it stands for and, per candidate bandwidth b, the kernel
// weight exp((cos − 1)/b). Existing prototypes are sketched again.
func (m *KernelRelevance) setDim(d int) {
	m.dim, m.words = d, (d+63)/64
	m.query = make([]uint64, m.words)
	m.sketch = make([]uint64, m.words)
	m.cosine = make([]float64, d+1)
	for h := range m.cosine {
		m.cosine[h] = math.Cos(math.Pi * float64(h) / float64(max(d, 1)))
	}
	m.weights = make([][]float64, len(m.bandwidths))
	for b, bw := range m.bandwidths {
		m.weights[b] = make([]float64, d+1)
		for h, c := range m.cosine {
			m.weights[b][h] = math.Exp((c - 1) / bw)
		}
	}
	m.signs = make([][]uint64, len(m.tools))
	for t, protos := range m.tools {
		for k, p := range protos {
			m.setSketch(t, k, p.c)
		}
	}
}

// mergeInto moves the unit vector c (weight wc) towards x (weight wx) and renormalises it.
func mergeInto(c, x []float64, wc, wx float64) {
	// The weighted sum, not the mean: the renormalisation divides anyway. gonum's kernels are
	// vectorised and keep several partial sums.
	floats.Scale(wc, c)
	floats.AddScaled(c, wx, x)
	if norm := floats.Dot(c, c); norm > 0 {
		floats.Scale(1/math.Sqrt(norm), c)
	}
}

func dot(a, b []float64) float64 { return floats.Dot(a, b) }
