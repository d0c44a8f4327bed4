package evallatency

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/rated-dev/rated/internal/vecmath"
	"github.com/rated-dev/rated/pkg/retrieve"
)

// Mixture is a synthetic catalog with the structure of real tool embeddings: a Gaussian mixture
// whose components share one covariance, fitted to real embeddings (spherical k-means for the
// components, their member means and weights, and the pooled covariance of every embedding
// around its component's mean), sampled and scaled to unit length. Isotropic random vectors have
// no neighbourhoods; these have the real catalog's clusters and its spectrum of variation
// around them.
type Mixture struct {
	dim   int
	cum   []float64 // cumulative component weights
	means []float32 // components × dim
	// factor holds dim rows F_j with F Fᵀ = the pooled covariance: x = mean + F z, z ~ N(0, I).
	factor []float32
	// Components, Fitted and EffectiveRank describe the fit: the number of components, the real
	// embeddings fitted and the participation ratio (Σλ)²/Σλ² of the covariance's eigenvalues,
	// the number of directions the spread around a component effectively uses.
	Components, Fitted int
	EffectiveRank      float64
}

// FitMixture fits a Mixture of the given number of components to real embeddings (all of one
// length; each is scaled to unit length first).
func FitMixture(embs [][]float32, components int, seed uint64) (*Mixture, error) {
	n := len(embs)
	if n == 0 {
		return nil, errors.New("mixture: no embeddings to fit")
	}
	dim := len(embs[0])
	if components < 1 || n < 2*components || dim == 0 {
		return nil, fmt.Errorf("mixture: %d embeddings of %d values for %d components: want at least two embeddings per component", n, dim, components)
	}
	x := make([]float32, n*dim)
	for i, v := range embs {
		if len(v) != dim {
			return nil, fmt.Errorf("mixture: embedding %d has %d values, want %d", i, len(v), dim)
		}
		copy(x[i*dim:], v)
	}
	vecmath.NormaliseRows(x, dim)
	_, assign, err := retrieve.SphericalKMeans(x, n, dim, components, 20, rand.New(rand.NewPCG(seed, 0x6d1)))
	if err != nil {
		return nil, fmt.Errorf("mixture: %w", err)
	}
	sums := make([]float64, components*dim)
	counts := make([]int, components)
	for i, a := range assign {
		counts[a]++
		for j, v := range x[i*dim : (i+1)*dim] {
			sums[int(a)*dim+j] += float64(v)
		}
	}
	m := &Mixture{dim: dim, cum: make([]float64, components), means: make([]float32, components*dim), Components: components, Fitted: n}
	acc := 0.0
	for c := range components {
		acc += float64(counts[c]) / float64(n)
		m.cum[c] = acc
		for j := range dim {
			if counts[c] > 0 {
				m.means[c*dim+j] = float32(sums[c*dim+j] / float64(counts[c]))
			}
		}
	}
	resid := mat.NewDense(n, dim, nil)
	for i, a := range assign {
		for j := range dim {
			resid.Set(i, j, float64(x[i*dim+j]-m.means[int(a)*dim+j]))
		}
	}
	var cov mat.SymDense
	cov.SymOuterK(1/float64(n-components), resid.T())
	var eig mat.EigenSym
	if !eig.Factorize(&cov, true) {
		return nil, errors.New("mixture: the covariance's eigen-decomposition failed")
	}
	values := eig.Values(nil)
	var vectors mat.Dense
	eig.VectorsTo(&vectors)
	m.factor = make([]float32, dim*dim)
	var sum, sumSq float64
	for k, l := range values {
		l = max(l, 0)
		sum, sumSq = sum+l, sumSq+l*l
		s := math.Sqrt(l)
		for j := range dim {
			m.factor[j*dim+k] = float32(vectors.At(j, k) * s)
		}
	}
	if sumSq > 0 {
		m.EffectiveRank = sum * sum / sumSq
	}
	return m, nil
}

// Sample draws n unit vectors, in one backing array.
func (m *Mixture) Sample(rng *rand.Rand, n int) [][]float32 {
	dim := m.dim
	data := make([]float32, n*dim)
	const chunk = 1024
	z := make([]float32, chunk*dim)
	for lo := 0; lo < n; lo += chunk {
		h := min(chunk, n-lo)
		for i := range z[:h*dim] {
			z[i] = float32(rng.NormFloat64())
		}
		out := data[lo*dim : (lo+h)*dim]
		vecmath.DotBlock(z, h, m.factor, dim, dim, out) // row i: (F z_i)_j = z_i · F_j
		for i := range h {
			c := min(len(m.cum)-1, sortSearch(m.cum, rng.Float64()))
			row := out[i*dim : (i+1)*dim]
			for j, mu := range m.means[c*dim : (c+1)*dim] {
				row[j] += mu
			}
		}
	}
	vecmath.NormaliseRows(data, dim)
	out := make([][]float32, n)
	for i := range out {
		out[i] = data[i*dim : (i+1)*dim : (i+1)*dim]
	}
	return out
}

// sortSearch is the first index whose cumulative weight exceeds u.
func sortSearch(cum []float64, u float64) int {
	lo, hi := 0, len(cum)
	for lo < hi {
		mid := (lo + hi) / 2
		if cum[mid] > u {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// Profile summarises the neighbourhood structure of a set of unit vectors: the mean cosine of
// random pairs (how concentrated the set is) and, for up to 500 of its vectors, the mean cosine
// of their nearest and k-th nearest other vector. Comparing a fitted Mixture's profile with the
// real embeddings' at the same size checks the fit.
type Profile struct {
	Pairs   float64 `json:"mean_pair_cosine"`
	Nearest float64 `json:"mean_nn1_cosine"`
	KthNear float64 `json:"mean_nnk_cosine"`
	K       int     `json:"k"`
}

// NeighbourProfile measures vecs' Profile with k neighbours, by exact search.
func NeighbourProfile(vecs [][]float32, k int, seed uint64) (Profile, error) {
	n := len(vecs)
	if n < k+2 || k < 1 {
		return Profile{}, fmt.Errorf("profile: %d vectors for %d neighbours", n, k)
	}
	rng := rand.New(rand.NewPCG(seed, 0x9f))
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprint(i)
	}
	idx, err := retrieve.NewDenseFromVectors(syntheticEncoder{len(vecs[0])}, ids, vecs)
	if err != nil {
		return Profile{}, err
	}
	probe := rng.Perm(n)[:min(n, 500)]
	qs := make([][]float32, len(probe))
	for i, p := range probe {
		qs[i] = vecs[p]
	}
	res, err := idx.SearchVectors(qs, k+1)
	if err != nil {
		return Profile{}, err
	}
	pr := Profile{K: k}
	for i, cands := range res {
		var others []float64
		for _, c := range cands {
			if c.Index != probe[i] {
				others = append(others, c.Score)
			}
		}
		pr.Nearest += others[0]
		pr.KthNear += others[k-1]
		a, b := vecs[rng.IntN(n)], vecs[rng.IntN(n)]
		s := 0.0
		for j := range a {
			s += float64(a[j]) * float64(b[j])
		}
		pr.Pairs += s
	}
	m := float64(len(res))
	pr.Pairs, pr.Nearest, pr.KthNear = pr.Pairs/m, pr.Nearest/m, pr.KthNear/m
	return pr, nil
}

// FitReport records how the sweep's vectors were made and how well they match the real ones.
type FitReport struct {
	// Source names the real embeddings (the retriever and catalog they come from).
	Source        string  `json:"source"`
	Fitted        int     `json:"fitted"`
	Components    int     `json:"components"`
	EffectiveRank float64 `json:"effective_rank"`
	// Real and Synthetic are the neighbour profiles of the real embeddings and of as many
	// draws from the fitted mixture.
	Real      Profile `json:"real_profile"`
	Synthetic Profile `json:"synthetic_profile"`
}

// FitCatalog fits a Mixture of components (0: one per 20 embeddings) to real embeddings and
// compares the neighbour profile (k neighbours) of the real set with that of as many draws.
func FitCatalog(embs [][]float32, source string, components, k int, seed uint64) (*Mixture, *FitReport, error) {
	if components == 0 {
		components = max(1, len(embs)/20)
	}
	m, err := FitMixture(embs, components, seed)
	if err != nil {
		return nil, nil, err
	}
	unit := make([][]float32, len(embs))
	for i, v := range embs {
		unit[i] = append([]float32(nil), v...)
		vecmath.NormaliseRows(unit[i], len(v))
	}
	rep := &FitReport{Source: source, Fitted: m.Fitted, Components: m.Components, EffectiveRank: m.EffectiveRank}
	if rep.Real, err = NeighbourProfile(unit, k, seed); err != nil {
		return nil, nil, err
	}
	draws := m.Sample(rand.New(rand.NewPCG(seed, 0xf17)), len(embs))
	if rep.Synthetic, err = NeighbourProfile(draws, k, seed); err != nil {
		return nil, nil, err
	}
	return m, rep, nil
}
