package vecmath_test

import (
	"fmt"

	"github.com/rated-dev/rated/internal/vecmath"
)

// RATED's score for one arm: θᵀx̃ and (A⁻¹)ᵀx̃² in one pass. By hand:
// θᵀx = 1·1 + 2·2 = 5 and (A⁻¹)ᵀx² = 1·1 + 0.5·4 = 3.
func ExampleDot2() {
	theta, x, invA, x2 := []float64{1, 2}, []float64{1, 2}, []float64{1, 0.5}, []float64{1, 4}
	mean, variance := vecmath.Dot2(theta, x, invA, x2)
	fmt.Printf("mean %.3f variance %.3f\n", mean, variance)
	// Output:
	// mean 5.000 variance 3.000
}

// The discounted update of one arm after a success (y = 1, γ = 0.5, λ = 1). By hand, from
// d = 0, b = [1, 2] with x = [1, 2], x² = [1, 4]:
//
//	d ← 0.5·0 + x² = [1, 4], b ← 0.5·b + x = [1.5, 3], A⁻¹ = 1/(1 + d) = [0.5, 0.2], θ = b·A⁻¹ = [0.75, 0.6]
func ExampleDiscountUpdate() {
	d, b, x, x2 := []float64{0, 0}, []float64{1, 2}, []float64{1, 2}, []float64{1, 4}
	invA, theta := make([]float64, 2), make([]float64, 2)
	vecmath.DiscountUpdate(d, b, invA, theta, x2, x, 0.5, 1, 1)
	fmt.Printf("d %.3f b %.3f invA %.3f theta %.3f\n", d, b, invA, theta)
	// Output:
	// d [1.000 4.000] b [1.500 3.000] invA [0.500 0.200] theta [0.750 0.600]
}

// The score block of a batched search: two queries against three documents (rows), and the
// rows made unit length first (the 3-4-5 triangle: [3, 4] becomes [0.6, 0.8]).
func ExampleDotBlock() {
	docs := []float32{3, 4, 0, 1, 1, 0}
	vecmath.NormaliseRows(docs, 2)
	queries := []float32{1, 0, 0, 1}
	scores := make([]float32, 2*3)
	vecmath.DotBlock(queries, 2, docs, 3, 2, scores)
	fmt.Printf("%.3f\n%.3f\n", scores[:3], scores[3:])
	// Output:
	// [0.600 0.000 1.000]
	// [0.800 1.000 0.000]
}

// Sign sketches of two 4-dimensional vectors and the Hamming distance between them. By hand:
// q = (0.5, −0.5, 0.5, 0.5) has bit 1 set (0b0010); the block's first sketch is q's own, its
// second is that of (−1, −1, 1, −1) (0b1011), two signs away; the six unused sketches are zero,
// one sign away.
func ExampleHammingBlocks() {
	q := make([]uint64, 1)
	vecmath.SignBits([]float64{0.5, -0.5, 0.5, 0.5}, q)
	other := make([]uint64, 1)
	vecmath.SignBits([]float64{-1, -1, 1, -1}, other)
	block := make([]uint64, vecmath.HammingBlockSize) // one word per sketch: word 0 of all eight
	block[0], block[1] = q[0], other[0]
	dist := make([]uint64, vecmath.HammingBlockSize)
	vecmath.HammingBlocks(q, block, 1, dist)
	fmt.Printf("q %04b, other %04b, distances %v\n", q[0], other[0], dist)
	// Output:
	// q 0010, other 1011, distances [0 2 1 1 1 1 1 1]
}
