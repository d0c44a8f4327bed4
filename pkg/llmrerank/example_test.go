package llmrerank_test

import (
	"fmt"

	"github.com/rated-dev/rated/pkg/llmrerank"
)

// A listwise answer becomes 0-based positions; text, repeats and unknown identifiers are skipped.
func ExampleParseRanking() {
	fmt.Println(llmrerank.ParseRanking("Ranking: [3] > [1] > [3] > [9] > [2]", 5))
	// Output:
	// [2 0 1]
}
