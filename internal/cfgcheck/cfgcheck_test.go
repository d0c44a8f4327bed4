package cfgcheck

import (
	"math"
	"strings"
	"testing"
)

type spec struct {
	Name  string  `yaml:"name"`
	Alpha float64 `yaml:"alpha,omitempty"`
	Inner *struct {
		Rate float32
	} `yaml:"inner"`
}

type config struct {
	Weights  map[string]float64 `yaml:"weights"`
	Policies []spec             `yaml:"policies"`
	Tau      float64            `yaml:"tau"`
}

func TestFiniteNamesTheKey(t *testing.T) {
	ok := config{Weights: map[string]float64{"a": 1}, Policies: []spec{{Name: "x", Alpha: 0.1}}, Tau: 0.05}
	if err := Finite("", ok); err != nil {
		t.Fatal(err)
	}
	inner := spec{Name: "y"}
	inner.Inner = &struct{ Rate float32 }{float32(math.Inf(-1))}
	for want, c := range map[string]config{
		"tau = NaN":                     {Tau: math.NaN()},
		"weights.b = +Inf":              {Weights: map[string]float64{"a": 1, "b": math.Inf(1)}},
		"policies[1].alpha = NaN":       {Policies: []spec{{Name: "x"}, {Name: "y", Alpha: math.NaN()}}},
		"policies[0].inner.Rate = -Inf": {Policies: []spec{inner}},
	} {
		err := Finite("", c)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("error %v, want it to start with %q", err, want)
		}
	}
	if err := Finite("cfg", config{Tau: math.Inf(1)}); err == nil || !strings.HasPrefix(err.Error(), "cfg.tau") {
		t.Errorf("prefix: %v", err)
	}
}
