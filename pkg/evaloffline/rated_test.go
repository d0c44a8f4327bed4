package evaloffline

import (
	"math"
	"reflect"
	"testing"

	"github.com/rated-dev/rated/pkg/retrieve"
)

// fixedRanking returns the same ranking for every query.
type fixedRanking []retrieve.Candidate

func (f fixedRanking) Name() string { return "fixed" }
func (f fixedRanking) Search(_ string, k int) ([]retrieve.Candidate, error) {
	out := append([]retrieve.Candidate(nil), f...)
	if len(out) > k {
		out = out[:k]
	}
	return out, nil
}

func TestRATEDOfflineReranksTheTopKByFusedScore(t *testing.T) {
	dense := fixedRanking{{ID: "a", Score: 0.80}, {ID: "b", Score: 0.79}, {ID: "c", Score: 0.70}, {ID: "d", Score: 0.69}}
	priors := map[string]float64{"a": 0.5, "b": 0.9, "c": 1.0, "d": 1.0}
	// Top-3 reranked with 0.75·sem + 0.25·prior: a .725, b .8175, c .775 -> b, c, a; d is outside
	// RATED's top-K and gets no score, so it is not returned.
	r := &RATEDOffline{dense: dense, k: 3, semWeight: 0.75, priorWeight: 0.25, priors: priors}
	got, err := r.Search("q", 4)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range got {
		ids = append(ids, c.ID)
	}
	if !reflect.DeepEqual(ids, []string{"b", "c", "a"}) {
		t.Fatalf("order %v, want [b c a]", ids)
	}
	for i, want := range []float64{0.8175, 0.775, 0.725} {
		if math.Abs(got[i].Score-want) > 1e-12 {
			t.Fatalf("%s score %v, want the fused score %v", got[i].ID, got[i].Score, want)
		}
	}
	// With the w/o-feedback weight 0.10: a .60+.05 = .65, b .5925+.09 = .6825, c .525+.1 = .625.
	r.priorWeight = 0.10
	got, _ = r.Search("q", 2)
	if len(got) != 2 || got[0].ID != "b" || got[1].ID != "a" {
		t.Fatalf("got %+v, want b then a", got)
	}
}
