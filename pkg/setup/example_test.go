package setup_test

import (
	"fmt"

	"github.com/rated-dev/rated/pkg/setup"
)

// The parts dense retrieval needs, in installation order, with the steps that install them.
func ExampleSelect() {
	parts, err := setup.Select([]string{"models", "onnxruntime"})
	if err != nil {
		panic(err)
	}
	for _, p := range parts {
		fmt.Println(p.Name, p.Steps)
	}
	// Output:
	// onnxruntime [10-onnxruntime.sh]
	// models [20-models.sh]
}
