package evaldynamic

import (
	"strings"
	"testing"

	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/sim"
)

func namesConfig(scenarios []string, policies []string, protocols ...string) *Config {
	c := &Config{Dynamic: DynamicConfig{Seeds: []uint64{1, 2}}}
	for _, s := range scenarios {
		c.Scenarios = append(c.Scenarios, sim.Scenario{Name: s})
	}
	for _, p := range policies {
		c.Policies = append(c.Policies, bandit.Spec{Name: p})
	}
	for _, p := range protocols {
		c.Protocols = append(c.Protocols, sim.Protocol{Name: p})
	}
	return c
}

// TestCheckFileNames: names that clean to the same file name once mixed two runs' decisions in
// one log (or aborted the grid with "in use") and overwrote one plot with another.
func TestCheckFileNames(t *testing.T) {
	cases := []struct {
		name string
		cfg  *Config
		log  bool
		want string // "" : accepted
	}{
		{"distinct names", namesConfig([]string{"p20", "p30"}, []string{"RATED (Full)", "Static"}, "execution"), true, ""},
		{"parentheses dropped", namesConfig([]string{"p20"}, []string{"Static (A)", "Static A"}, "execution"), true,
			`policy "Static (A)", seed 1 and of protocol "execution", scenario "p20", policy "Static A", seed 1 would share the decision-log prefix execution_p20_Static-A_seed1`},
		{"the same policies without a log", namesConfig([]string{"p20"}, []string{"Static (A)", "Static A"}, "execution"), false, ""},
		// The underscore that joins the parts can come from a name: scenario "p_x" with policy "y"
		// and scenario "p" with policy "x_y" both give execution_p_x_y_seed1.
		{"underscore in names", namesConfig([]string{"p_x", "p"}, []string{"y", "x_y"}, "execution"), true, "execution_p_x_y_seed1"},
		{"scenario plots", namesConfig([]string{"a b", "a/b"}, []string{"s"}, "execution"), false,
			`scenario "a b" and scenario "a/b" would both write the plot sr-a-b.png`},
		{"protocol plots", namesConfig([]string{"p20"}, []string{"s"}, "x y", "x/y"), false,
			`protocol "x y" with scenario "p20" and protocol "x/y" with scenario "p20" would both write the plot sr-x-y-p20.png`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.cfg.CheckFileNames(c.log)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestShippedConfigsHaveDistinctFileNames(t *testing.T) {
	cfg, err := PaperConfig()
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.CheckFileNames(true); err != nil {
		t.Fatal(err)
	}
}

func TestOnsets(t *testing.T) {
	at := func(name string, starts ...int) sim.Scenario {
		s := sim.Scenario{Name: name}
		for _, st := range starts {
			s.Events = append(s.Events, sim.Event{Start: st})
		}
		return s
	}
	one := &Config{Scenarios: []sim.Scenario{at("a", 2000), at("b", 2500, 2000)}}
	if got := one.Onsets(); got != "step 2000" {
		t.Errorf("one onset: %q", got)
	}
	two := &Config{Scenarios: []sim.Scenario{at("a", 3000), at("b", 2000), at("c", 3000, 3500)}}
	if got, want := two.Onsets(), "step 3000 (a, c); step 2000 (b)"; got != want {
		t.Errorf("two onsets: %q, want %q", got, want)
	}
}
