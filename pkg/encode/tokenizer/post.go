package tokenizer

// templatePiece is one element of a post-processing template: special token ids, or the first
// (sequence 0) or second (sequence 1) input sequence, with the type id it gets.
type templatePiece struct {
	special  []int32
	sequence int // 0: A, 1: B; ignored for special tokens
	typeID   int32
}

// postProcessor adds the special tokens: TemplateProcessing, BertProcessing, or none.
type postProcessor struct {
	single, pair   []templatePiece
	nSingle, nPair int // special tokens added to a single sequence / a pair
}

func countSpecial(pieces []templatePiece) int {
	n := 0
	for _, p := range pieces {
		n += len(p.special)
	}
	return n
}

// postProcess truncates the sequences (the reference's truncate_encodings with the special
// tokens' room taken off) and lays them out by the template, appending to ids and types.
func (t *Tokenizer) postProcess(ids, types, first, second []int32, pair bool, trunc truncation) ([]int32, []int32) {
	template, nAdded := t.post.single, t.post.nSingle
	if pair {
		template, nAdded = t.post.pair, t.post.nPair
	}
	if trunc.maxLen > 0 {
		// The reference computes max_length - added with unsigned arithmetic; a max length below
		// the number of special tokens wraps around and disables truncation.
		if maxLen := trunc.maxLen - nAdded; maxLen >= 0 {
			first, second = truncateLongestFirst(first, second, pair, maxLen, trunc.left)
		}
	}
	for _, p := range template {
		if p.special != nil {
			for _, id := range p.special {
				ids = append(ids, id)
				types = append(types, p.typeID)
			}
			continue
		}
		seq := first
		if p.sequence == 1 {
			seq = second
		}
		for _, id := range seq {
			ids = append(ids, id)
			types = append(types, p.typeID)
		}
	}
	return ids, types
}

// truncateLongestFirst is the reference's LongestFirst strategy (stride 0).
func truncateLongestFirst(first, second []int32, pair bool, maxLen int, left bool) ([]int32, []int32) {
	cut := func(seq []int32, n int) []int32 {
		if len(seq) <= n {
			return seq
		}
		if left {
			return seq[len(seq)-n:]
		}
		return seq[:n]
	}
	if maxLen == 0 {
		return first[:0], second[:0]
	}
	total := len(first) + len(second)
	if total <= maxLen {
		return first, second
	}
	if !pair {
		return cut(first, maxLen), second
	}
	n1, n2 := len(first), len(second)
	swap := false
	if n1 > n2 {
		swap = true
		n1, n2 = n2, n1
	}
	if n1 > maxLen {
		n2 = n1
	} else {
		n2 = max(n1, maxLen-n1)
	}
	if n1+n2 > maxLen {
		n1 = maxLen / 2
		n2 = n1 + maxLen%2
	}
	if swap {
		n1, n2 = n2, n1
	}
	return cut(first, n1), cut(second, n2)
}
