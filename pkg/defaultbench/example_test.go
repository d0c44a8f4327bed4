package defaultbench_test

import (
	"fmt"

	"github.com/rated-dev/rated/pkg/defaultbench"
)

// The embedded benchmark needs no set-up. Its counts are the ones in the package comment, and
// each query's relevance set is every tool of its function: the check below counts the test
// queries whose relevant tools are exactly the tools of one function.
func ExampleLoad() {
	b, err := defaultbench.Load()
	if err != nil {
		panic(err)
	}
	fmt.Println(len(b.Tools), "tools,", len(b.Queries), "queries,", len(b.Splits["dev"]), "in dev,", len(b.Splits["test"]), "in test")
	byFunction := map[string]map[string]bool{}
	functionOf := map[string]string{}
	for _, t := range b.Tools {
		if byFunction[t.Function] == nil {
			byFunction[t.Function] = map[string]bool{}
		}
		byFunction[t.Function][t.ID] = true
		functionOf[t.ID] = t.Function
	}
	exact := 0
	queries := b.SplitQueries("test")
	for _, q := range queries {
		relevant := b.Relevant("test", q.ID)
		fn := byFunction[functionOf[relevant[0]]]
		same := len(relevant) == len(fn)
		for _, id := range relevant {
			same = same && fn[id]
		}
		if same {
			exact++
		}
	}
	fmt.Printf("%d of %d test queries: relevant = the tools of one function\n", exact, len(queries))
	// Output:
	// 316 tools, 1500 queries, 456 in dev, 1044 in test
	// 1044 of 1044 test queries: relevant = the tools of one function
}
