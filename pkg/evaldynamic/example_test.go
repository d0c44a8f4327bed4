package evaldynamic_test

import (
	"fmt"

	"github.com/spf13/viper"

	"github.com/rated-dev/rated/pkg/evaldynamic"
)

// The paper's protocol as configs/paper.yaml holds it (T = 10,000 steps, failures from step
// 2,000, Post-Fail SR over steps 2,001–5,000, a 200-step AS window), and the same protocol
// compressed to 1,000 steps by setting dynamic.steps alone (as --steps 1000 does): every
// step-valued key scales by 1,000/10,000, so the onset moves to 200, the window to [200, 500)
// and the AS window to 20, while K and the fusion weights are unchanged.
func ExampleLoadConfig() {
	show := func(cfg *evaldynamic.Config) {
		d := cfg.Dynamic
		fmt.Printf("T %d, onset %d, summary [%d, %d), AS window %d, K %d, fusion %.2f/%.2f/%.2f\n",
			d.Steps, cfg.Scenarios[0].Events[0].Start, d.SummaryFrom, d.SummaryTo, d.ASWindow,
			cfg.Retrieval.K, cfg.Fusion.Semantic, cfg.Fusion.Bandit, cfg.Fusion.Prior)
	}
	paper, err := evaldynamic.PaperConfig()
	if err != nil {
		panic(err)
	}
	show(paper)

	v := viper.New()
	v.Set("dynamic.steps", 1000)
	short, err := evaldynamic.LoadConfig(v, nil)
	if err != nil {
		panic(err)
	}
	show(short)
	// Output:
	// T 10000, onset 2000, summary [2000, 5000), AS window 200, K 10, fusion 0.75/0.15/0.10
	// T 1000, onset 200, summary [200, 500), AS window 20, K 10, fusion 0.75/0.15/0.10
}
