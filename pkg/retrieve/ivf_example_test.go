package retrieve_test

import (
	"fmt"
	"os"

	"github.com/rated-dev/rated/pkg/retrieve"
)

// compass embeds nothing: the example's documents come as vectors.
type compass struct{}

func (compass) Name() string                                { return "compass" }
func (compass) Dim() int                                    { return 2 }
func (compass) EncodeQueries([]string) ([][]float32, error) { return nil, fmt.Errorf("no text") }
func (compass) EncodeDocs([]string) ([][]float32, error)    { return nil, fmt.Errorf("no text") }

// Six tools in two directions, two inverted lists: a query pointing north-east scans only the
// list nearest it, and the index is saved so that the next OpenIVF loads it.
func ExampleOpenIVF() {
	ids := []string{"east-1", "east-2", "east-3", "north-1", "north-2", "north-3"}
	vecs := [][]float32{{1, 0}, {0.99, 0.14}, {0.96, 0.28}, {0, 1}, {0.14, 0.99}, {0.28, 0.96}}
	d, err := retrieve.NewDenseFromVectors(compass{}, ids, vecs)
	if err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "ivf")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	p := retrieve.IVFParams{Lists: 2, Probes: 1, Rescore: 3, Iterations: 5, Seed: 1}
	idx, built, err := retrieve.OpenIVF(d, p, dir, nil)
	if err != nil {
		panic(err)
	}
	top, err := idx.SearchVector([]float32{0.6, 0.8}, 2)
	if err != nil {
		panic(err)
	}
	fmt.Println(built, top[0].ID, top[1].ID)
	_, built, _ = retrieve.OpenIVF(d, p, dir, nil)
	fmt.Println(built)
	// Output:
	// true north-3 north-2
	// false
}
