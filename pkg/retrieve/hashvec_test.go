package retrieve

import (
	"hash/fnv"
	"math"
	"testing"
)

func TestHashedBagOfWords(t *testing.T) {
	h, err := NewHashedBagOfWords(1 << 20) // wide enough that these tokens do not collide
	if err != nil {
		t.Fatal(err)
	}
	v, _ := h.QueryVector("Send send a Slack message")
	// tokens: send×2, a, slack, message -> entries ±2, ±1, ±1, ±1; norm √7.
	bucket := func(tok string) (int, float64) {
		f := fnv.New64a()
		f.Write([]byte(tok))
		s := f.Sum64()
		sign := 1.0
		if s>>63 == 1 {
			sign = -1
		}
		return int(s % (1 << 20)), sign
	}
	for tok, count := range map[string]float64{"send": 2, "a": 1, "slack": 1, "message": 1} {
		i, sign := bucket(tok)
		if want := sign * count / math.Sqrt(7); math.Abs(v[i]-want) > 1e-12 {
			t.Errorf("%s: v[%d] = %v, want %v", tok, i, v[i], want)
		}
	}
	zero, _ := h.QueryVector("!!!")
	for _, x := range zero {
		if x != 0 {
			t.Fatal("a query without tokens must map to the zero vector")
		}
	}
	if _, err := NewHashedBagOfWords(0); err == nil {
		t.Fatal("dimension 0 must be refused")
	}
}
