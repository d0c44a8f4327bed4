package retrieve

import (
	"math"
	"slices"
	"testing"

	"github.com/rated-dev/rated/pkg/catalog"
)

// TestEncoderSimilaritiesOneCall checks the batched consistency against hand-computed cosines,
// that the distinct texts go to the encoder in one call, and that ComputePriors gives the same
// priors through the batch path as through one call per tool.
func TestEncoderSimilaritiesOneCall(t *testing.T) {
	enc := &tableEncoder{dim: 2, vecs: map[string][]float32{
		"get weather":           {1, 0},
		"Returns the forecast.": {0.6, 0.8},
		"send mail":             {0, 1},
		"Sends an email.":       {0.28, 0.96},
	}}
	sim := EncoderSimilarity{Encoder: enc}
	got, err := sim.Similarities([]string{"get weather", "send mail", "get weather"}, []string{"Returns the forecast.", "Sends an email.", "Sends an email."})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0.6, 0.96, 0.28}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-6 {
			t.Errorf("pair %d: %v, want %v", i, got[i], want[i])
		}
	}
	if wantSeen := []string{"get weather", "Returns the forecast.", "send mail", "Sends an email."}; !slices.Equal(enc.docSeen, wantSeen) {
		t.Errorf("encoder saw %q, want the 4 distinct texts in one call", enc.docSeen)
	}

	tools := []catalog.Tool{
		{ID: "a", Name: "get_weather", Description: "Returns the forecast.", Platform: "langchain"},
		{ID: "b", Name: "sendMail", Description: "Sends an email.", Platform: "n8n", Tags: []string{"mail"}},
	}
	batched := slices.Clone(tools)
	if err := catalog.ComputePriors(batched, catalog.PaperPriorConfig(), sim); err != nil {
		t.Fatal(err)
	}
	single := slices.Clone(tools)
	if err := catalog.ComputePriors(single, catalog.PaperPriorConfig(), pairOnly{sim}); err != nil {
		t.Fatal(err)
	}
	for i := range tools {
		if batched[i].Prior.Value != single[i].Prior.Value || batched[i].Prior.Consistency != single[i].Prior.Consistency {
			t.Errorf("tool %s: batched prior %+v, per-pair %+v", tools[i].ID, *batched[i].Prior, *single[i].Prior)
		}
	}
	if c := batched[0].Prior.Consistency; math.Abs(c-0.6) > 1e-6 {
		t.Errorf("get_weather consistency %v, want 0.6", c)
	}
}

// pairOnly hides the batch method, forcing ComputePriors' one-call-per-tool path.
type pairOnly struct{ s EncoderSimilarity }

func (p pairOnly) Name() string                            { return p.s.Name() }
func (p pairOnly) Similarity(a, b string) (float64, error) { return p.s.Similarity(a, b) }
