package encode

import (
	"math"
	"testing"
)

func TestPooling(t *testing.T) {
	// batch 2, seqLen 3, dim 2; hand-computed expectations.
	hidden := []float32{
		1, 2, 3, 4, 100, 100, // seq 0: tokens (1,2) (3,4) (100,100)
		-1, 0, 5, 6, 7, 8, // seq 1: tokens (-1,0) (5,6) (7,8)
	}
	mask := []int64{1, 1, 0, 1, 1, 1}
	tests := []struct {
		name string
		got  [][]float32
		want [][]float32
	}{
		{"cls", poolCLS(hidden, 2, 3, 2), [][]float32{{1, 2}, {-1, 0}}},
		// seq 0 ignores the padded third token: ((1+3)/2, (2+4)/2); seq 1 averages all three.
		{"mean", poolMean(hidden, mask, 2, 3, 2), [][]float32{{2, 3}, {11.0 / 3, 14.0 / 3}}},
		// an all-padding row divides by the 1e-9 clamp of sentence-transformers: zero stays zero.
		{"mean-all-masked", poolMean(hidden[:6], []int64{0, 0, 0}, 1, 3, 2), [][]float32{{0, 0}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.got) != len(tc.want) {
				t.Fatalf("got %d vectors, want %d", len(tc.got), len(tc.want))
			}
			for i := range tc.want {
				for j := range tc.want[i] {
					if math.Abs(float64(tc.got[i][j]-tc.want[i][j])) > 1e-6 {
						t.Errorf("vector %d = %v, want %v", i, tc.got[i], tc.want[i])
					}
				}
			}
		})
	}
}

func TestNormalizeL2(t *testing.T) {
	tests := []struct {
		in      []float32
		want    []float32
		wantErr bool
	}{
		{[]float32{3, 4}, []float32{0.6, 0.8}, false},
		{[]float32{0, -2, 0}, []float32{0, -1, 0}, false},
		{[]float32{1, 1, 1, 1}, []float32{0.5, 0.5, 0.5, 0.5}, false},
		{[]float32{0, 0}, nil, true},
		{[]float32{float32(math.NaN()), 1}, nil, true},
	}
	for _, tc := range tests {
		v := append([]float32(nil), tc.in...)
		err := normalizeL2(v)
		if (err != nil) != tc.wantErr {
			t.Errorf("normalizeL2(%v) error = %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		for i := range tc.want {
			if math.Abs(float64(v[i]-tc.want[i])) > 1e-7 {
				t.Errorf("normalizeL2(%v) = %v, want %v", tc.in, v, tc.want)
				break
			}
		}
	}
}
