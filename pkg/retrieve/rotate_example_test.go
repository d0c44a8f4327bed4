package retrieve_test

import (
	"fmt"
	"math"

	"github.com/rated-dev/rated/pkg/retrieve"
)

// The lexical context: two queries' inner product is that of their hashed bags of words, but
// their weight is spread over every coordinate instead of a few buckets.
func ExampleNewLexicalContext() {
	bag, _ := retrieve.NewHashedBagOfWords(384)
	ctx, _ := retrieve.NewLexicalContext(384)
	dot := func(v retrieve.QueryVectorizer, a, b string) (float64, int) {
		x, _ := v.QueryVector(a)
		y, _ := v.QueryVector(b)
		s, nonzero := 0.0, 0
		for i := range x {
			s += x[i] * y[i]
			if math.Abs(x[i]) > 1e-12 {
				nonzero++
			}
		}
		return s, nonzero
	}
	a, b := "send a slack message", "post a message on slack"
	bagDot, bagNonzero := dot(bag, a, b)
	ctxDot, ctxNonzero := dot(ctx, a, b)
	fmt.Printf("%s: inner product %.4f, %d non-zero coordinates\n", bag.Name(), bagDot, bagNonzero)
	fmt.Printf("%s: inner product %.4f, %d non-zero coordinates\n", ctx.Name(), ctxDot, ctxNonzero)
	// Output:
	// hashed-bow-384: inner product 0.6708, 4 non-zero coordinates
	// hashed-bow-384-rotated: inner product 0.6708, 384 non-zero coordinates
}
