package retrieve_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/rated-dev/rated/pkg/retrieve"
)

// Four 2-D unit vectors in two pairs, clustered by inner product into two centroids.
func ExampleSphericalKMeans() {
	x := []float32{
		1, 0,
		0.8, 0.6,
		0, 1,
		-0.6, 0.8,
	}
	cents, assign, err := retrieve.SphericalKMeans(x, 4, 2, 2, 5, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		panic(err)
	}
	fmt.Println(assign[0] == assign[1], assign[2] == assign[3], assign[0] != assign[2])
	c := assign[0] // the normalised mean of (1, 0) and (0.8, 0.6): (0.949, 0.316)
	fmt.Printf("%.3f %.3f\n", cents[2*c], cents[2*c+1])
	// Output:
	// true true true
	// 0.949 0.316
}
