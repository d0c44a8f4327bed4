package retrieve

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/rated-dev/rated/internal/vecmath"
)

// SphericalKMeans clusters the n rows of x (n×dim, row-major) into c centroids by inner product:
// every row joins the centroid with the largest dot product, and every centroid is the mean of
// its members scaled to unit length (spherical k-means, the coarse quantiser of an inner-product
// index). It starts from c distinct rows drawn by rng and runs iters rounds; a centroid left
// without members restarts at a random member of the largest cluster, so that cluster splits in
// the next round. It returns the centroids (c×dim) and the final assignment of every row.
func SphericalKMeans(x []float32, n, dim, c, iters int, rng *rand.Rand) ([]float32, []int32, error) {
	if n < 1 || dim < 1 || c < 1 || c > n || len(x) < n*dim || iters < 0 {
		return nil, nil, fmt.Errorf("k-means: %d rows of %d values (%d given), %d centroids, %d rounds: want 1 <= centroids <= rows", n, dim, len(x), c, iters)
	}
	cents := make([]float32, c*dim)
	for i, r := range partialPerm(rng, n, c) {
		copy(cents[i*dim:(i+1)*dim], x[r*dim:(r+1)*dim])
	}
	vecmath.NormaliseRows(cents[:c*dim], dim)
	assign := make([]int32, n)
	sums := make([]float64, c*dim)
	counts := make([]int, c)
	for range iters {
		NearestCentroids(x, n, dim, cents, c, assign)
		clear(sums)
		clear(counts)
		for i, a := range assign {
			counts[a]++
			s := sums[int(a)*dim : (int(a)+1)*dim]
			for j, v := range x[i*dim : (i+1)*dim] {
				s[j] += float64(v)
			}
		}
		largest := 0
		for j := range counts {
			if counts[j] > counts[largest] {
				largest = j
			}
		}
		for j := range c {
			cj := cents[j*dim : (j+1)*dim]
			if counts[j] == 0 {
				// Restart at the first member of the largest cluster after a random offset.
				start := rng.IntN(n)
				for i := range n {
					if r := (start + i) % n; assign[r] == int32(largest) {
						copy(cj, x[r*dim:(r+1)*dim])
						break
					}
				}
				continue
			}
			for t, s := range sums[j*dim : (j+1)*dim] {
				cj[t] = float32(s)
			}
		}
		vecmath.NormaliseRows(cents[:c*dim], dim)
	}
	NearestCentroids(x, n, dim, cents, c, assign)
	return cents, assign, nil
}

// partialPerm returns k distinct values of [0, n) in the order a seeded Fisher–Yates shuffle
// draws them.
func partialPerm(rng *rand.Rand, n, k int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	for i := range k {
		j := i + rng.IntN(n-i)
		idx[i], idx[j] = idx[j], idx[i]
	}
	return idx[:k]
}

// Tiles of NearestCentroids: 64 rows are scored against 512 centroids at a time (768 KB at
// d = 384, inside a core's L2), the blocking of Dense.SearchVectors.
const (
	assignRowChunk     = 64
	assignCentroidTile = 512
)

// NearestCentroids sets assign[i] to the centroid (row of cents, c×dim) with the largest dot
// product with row i of x (n×dim), ties to the lower centroid. Chunks of rows are spread over
// GOMAXPROCS workers; each scores its chunk against tiles of centroids with vecmath.DotBlock.
func NearestCentroids(x []float32, n, dim int, cents []float32, c int, assign []int32) {
	if len(x) < n*dim || len(cents) < c*dim || len(assign) < n || c < 1 {
		panic("retrieve.NearestCentroids: slice too short or no centroid")
	}
	chunks := (n + assignRowChunk - 1) / assignRowChunk
	workers := min(runtime.GOMAXPROCS(0), chunks)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			scores := make([]float32, assignRowChunk*assignCentroidTile)
			best := make([]float32, assignRowChunk)
			for ch := int(next.Add(1) - 1); ch < chunks; ch = int(next.Add(1) - 1) {
				lo := ch * assignRowChunk
				h := min(assignRowChunk, n-lo)
				for r := range h {
					best[r], assign[lo+r] = float32(math.Inf(-1)), 0
				}
				for t0 := 0; t0 < c; t0 += assignCentroidTile {
					w := min(assignCentroidTile, c-t0)
					vecmath.DotBlock(x[lo*dim:(lo+h)*dim], h, cents[t0*dim:(t0+w)*dim], w, dim, scores)
					for r := range h {
						row := scores[r*w : (r+1)*w]
						for j, s := range row {
							if s > best[r] {
								best[r], assign[lo+r] = s, int32(t0+j)
							}
						}
					}
				}
			}
		}()
	}
	wg.Wait()
}
