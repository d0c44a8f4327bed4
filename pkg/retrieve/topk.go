package retrieve

import "slices"

// topK keeps the k best (score, index) pairs seen, higher score first, then lower index: a
// bounded min-heap whose root is the worst kept pair, so a score that cannot enter is rejected
// with one comparison.
type topK struct {
	k     int
	score []float32
	index []int32
}

func newTopK(k int) *topK {
	return &topK{k: k, score: make([]float32, 0, k), index: make([]int32, 0, k)}
}

// worse reports whether pair a ranks below pair b.
func (h *topK) worse(a, b int) bool {
	sa, sb := h.score[a], h.score[b]
	return sa < sb || (sa == sb && h.index[a] > h.index[b])
}

func (h *topK) swap(a, b int) {
	h.score[a], h.score[b] = h.score[b], h.score[a]
	h.index[a], h.index[b] = h.index[b], h.index[a]
}

// push offers document i with score s.
func (h *topK) push(s float32, i int32) {
	if len(h.score) < h.k {
		h.score, h.index = append(h.score, s), append(h.index, i)
		for j := len(h.score) - 1; j > 0; {
			p := (j - 1) / 2
			if !h.worse(j, p) {
				break
			}
			h.swap(j, p)
			j = p
		}
		return
	}
	if s0 := h.score[0]; s < s0 || (s == s0 && i > h.index[0]) {
		return
	}
	h.score[0], h.index[0] = s, i
	for j := 0; ; {
		l := 2*j + 1
		if l >= len(h.score) {
			return
		}
		w := l
		if r := l + 1; r < len(h.score) && h.worse(r, l) {
			w = r
		}
		if !h.worse(w, j) {
			return
		}
		h.swap(w, j)
		j = w
	}
}

// pushRow offers documents base, base+1, … with the scores of row.
func (h *topK) pushRow(row []float32, base int) {
	for j, s := range row {
		if len(h.score) == h.k && s < h.score[0] {
			continue // cannot enter (a tie is decided by push)
		}
		h.push(s, int32(base+j))
	}
}

// candidates returns the kept pairs best first.
func (h *topK) candidates(ids []string) []Candidate {
	order := make([]int, len(h.score))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		switch {
		case h.worse(b, a):
			return -1
		case h.worse(a, b):
			return 1
		}
		return 0
	})
	out := make([]Candidate, len(order))
	for r, i := range order {
		d := h.index[i]
		out[r] = Candidate{ID: ids[d], Index: int(d), Score: float64(h.score[i])}
	}
	return out
}
