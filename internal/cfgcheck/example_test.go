package cfgcheck_test

import (
	"fmt"
	"math"

	"github.com/rated-dev/rated/internal/cfgcheck"
)

func ExampleFinite() {
	type spec struct {
		Name  string  `yaml:"name"`
		Alpha float64 `yaml:"alpha"`
	}
	cfg := struct {
		Policies []spec `yaml:"policies"`
	}{Policies: []spec{{"a", 0.1}, {"b", math.Inf(1)}}}
	fmt.Println(cfgcheck.Finite("", cfg))
	// Output: policies[1].alpha = +Inf: must be a finite number
}
