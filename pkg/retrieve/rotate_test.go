package retrieve

import (
	"math"
	"strings"
	"testing"
)

func cosine(a, b []float64) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab, aa, bb = ab+a[i]*b[i], aa+a[i]*a[i], bb+b[i]*b[i]
	}
	return ab / math.Sqrt(aa*bb)
}

// TestRotatedContextKeepsInnerProducts: the rotation is orthogonal (its columns orthonormal),
// so norms and cosines of the hashed bags of words are kept, it is the same for a seed and
// another for another seed, and it refuses a dimension whose matrix would not fit.
func TestRotatedContextKeepsInnerProducts(t *testing.T) {
	h, _ := NewHashedBagOfWords(64)
	r, err := NewRotatedContext(h, 7)
	if err != nil {
		t.Fatal(err)
	}
	for i := range r.cols {
		for j := range r.cols {
			dot := 0.0
			for k := range r.cols[i] {
				dot += r.cols[i][k] * r.cols[j][k]
			}
			want := 0.0
			if i == j {
				want = 1
			}
			if math.Abs(dot-want) > 1e-12 {
				t.Fatalf("columns %d and %d: dot %v, want %v", i, j, dot, want)
			}
		}
	}
	queries := []string{"send a slack message to the team", "slack message", "weather in Paris tomorrow", "convert 10 euros to dollars", "!!!"}
	for _, a := range queries {
		for _, b := range queries {
			ia, _ := h.QueryVector(a)
			ib, _ := h.QueryVector(b)
			ra, _ := r.QueryVector(a)
			rb, _ := r.QueryVector(b)
			var in, out float64
			for k := range ia {
				in += ia[k] * ib[k]
				out += ra[k] * rb[k]
			}
			if math.Abs(in-out) > 1e-12 {
				t.Errorf("%q·%q: %v after the rotation, %v before", a, b, out, in)
			}
		}
	}
	again, _ := NewRotatedContext(h, 7)
	other, _ := NewRotatedContext(h, 8)
	x, _ := r.QueryVector(queries[0])
	y, _ := again.QueryVector(queries[0])
	z, _ := other.QueryVector(queries[0])
	if math.Abs(cosine(x, y)-1) > 1e-12 || cosine(x, z) > 0.9 {
		t.Errorf("seed 7 twice: cosine %v (want 1); seeds 7 and 8: %v (want a different rotation)", cosine(x, y), cosine(x, z))
	}
	if r.Name() != "hashed-bow-64-rotated" || r.Dim() != 64 {
		t.Errorf("name %q, dim %d", r.Name(), r.Dim())
	}
	wide, _ := NewHashedBagOfWords(maxRotatedDim + 1)
	if _, err := NewRotatedContext(wide, 1); err == nil || !strings.Contains(err.Error(), "dimension 4097") {
		t.Errorf("dimension past the cap: %v", err)
	}
}

// TestRotatedContextSignsCarryTheQuery is why the rotation exists: after centring on the mean
// context, one sign bit per coordinate of two unrelated queries agrees on almost every coordinate
// for a hashed bag of words (the mean's signs), so sign sketches cannot tell queries apart, and
// on about half of them once rotated, as for random hyperplanes.
func TestRotatedContextSignsCarryTheQuery(t *testing.T) {
	h, _ := NewHashedBagOfWords(384)
	r, _ := NewLexicalContext(384)
	queries := []string{"send a slack message to the team", "weather in Paris tomorrow", "convert euros to dollars",
		"create a jira ticket for the bug", "find flights from rome to berlin", "translate this paragraph into german",
		"list my open github pull requests", "what is the price of bitcoin", "schedule a meeting on my calendar", "summarise this pdf"}
	agreement := func(v QueryVectorizer) float64 {
		vecs := make([][]float64, len(queries))
		mean := make([]float64, v.Dim())
		for i, q := range queries {
			vecs[i], _ = v.QueryVector(q)
			for k, x := range vecs[i] {
				mean[k] += x / float64(len(queries))
			}
		}
		same, pairs := 0.0, 0.0
		for i := range vecs {
			for j := i + 1; j < len(vecs); j++ {
				for k := range mean {
					if (vecs[i][k]-mean[k] >= 0) == (vecs[j][k]-mean[k] >= 0) {
						same++
					}
					pairs++
				}
			}
		}
		return same / pairs
	}
	t.Logf("sign agreement: hashed %.3f, rotated %.3f", agreement(h), agreement(r))
	if a := agreement(h); a < 0.9 {
		t.Errorf("hashed bag of words: sign agreement %.3f between unrelated queries, want > 0.9 (the mean's signs)", a)
	}
	if a := agreement(r); a < 0.4 || a > 0.62 {
		t.Errorf("rotated: sign agreement %.3f, want about one half", a)
	}
}

// BenchmarkLexicalContext times one query's context, hashed alone and hashed then rotated
// (docs/BENCHMARKS.md, "BM25 contexts").
func BenchmarkLexicalContext(b *testing.B) {
	bag, _ := NewHashedBagOfWords(384)
	rot, _ := NewLexicalContext(384)
	q := "send a slack message to the team about tomorrow's release"
	for _, v := range []QueryVectorizer{bag, rot} {
		b.Run(v.Name(), func(b *testing.B) {
			for b.Loop() {
				v.QueryVector(q)
			}
		})
	}
}
