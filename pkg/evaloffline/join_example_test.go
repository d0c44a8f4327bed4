package evaloffline_test

import (
	"fmt"
	"strings"

	"github.com/rated-dev/rated/pkg/evaloffline"
)

// A list flag splits at every comma, parameters included; JoinParameters puts the names back.
func ExampleJoinParameters() {
	flag := strings.Split("tfidf,bm25-en:k1=1.2,b=0.75,dense:bge-small-en-v1.5", ",")
	fmt.Printf("%q\n", evaloffline.JoinParameters(flag))
	// Output:
	// ["tfidf" "bm25-en:k1=1.2,b=0.75" "dense:bge-small-en-v1.5"]
}

// A registry checks a name's arguments before anything is built.
func ExampleRegistry_Check() {
	reg := evaloffline.NewLexicalRegistry()
	for _, name := range []string{"bm25:k1=1.2,b=0.5", "bm25:k1=high", "bm26"} {
		err := reg.Check(name, evaloffline.Env{})
		fmt.Println(name, "->", err != nil)
	}
	// Output:
	// bm25:k1=1.2,b=0.5 -> false
	// bm25:k1=high -> true
	// bm26 -> true
}
