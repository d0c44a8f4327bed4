package encode

import (
	"fmt"
	"strings"
	"testing"
)

// wordCount is a test tokenizer: one token per word plus [CLS] and [SEP], padded to the longest.
type wordCount struct{}

func (wordCount) EncodeBatch(texts []string, maxLen int) (TokenBatch, error) {
	var rows [][2][]int64
	for _, s := range texts {
		ids := []int64{101}
		for range strings.Fields(s) {
			ids = append(ids, 2000)
		}
		ids = append(ids, 102)
		if maxLen > 0 && len(ids) > maxLen {
			ids = append(ids[:maxLen-1], 102)
		}
		rows = append(rows, [2][]int64{ids, make([]int64, len(ids))})
	}
	return padBatch(rows), nil
}

func words(n int) string { return strings.TrimSpace(strings.Repeat("w ", n)) }

// TestPlanBatches checks batches cut by hand: token counts (words + 2, truncated at 10) sorted
// longest first with ties in input order, rows × longest ≤ 20 tokens, at most 3 rows.
func TestPlanBatches(t *testing.T) {
	m := &Model{cfg: &Config{Name: "t", MaxLength: 10}, opts: Options{BatchSize: 3, BatchTokens: 20}}
	tw := &tower{tok: wordCount{}}
	// tokens:             0:3   1:10(trunc) 2:4   3:4   4:2   5:3   6:5  7:2
	inputs := []string{words(1), words(30), words(2), words(2), "", words(1), words(3), ""}
	missing := []int{0, 1, 2, 3, 4, 5, 6, 7}
	got, err := m.planBatches(tw, inputs, missing)
	if err != nil {
		t.Fatal(err)
	}
	// sorted: 1(10) 6(5) 2(4) 3(4) 0(3) 5(3) 4(2) 7(2)
	// [1]: 2×10 = 20 fits, but 6 would make it 2 rows of 10 = 20 ≤ 20 → [1 6]; then 2 → 3×10 > 20.
	// [2 ...]: longest 4: up to 3 rows (12 tokens) → [2 3 0]; [5 4 7]: 3×3 = 9.
	want := "[[1 6] [2 3 0] [5 4 7]]"
	if fmt.Sprint(got) != want {
		t.Errorf("batches %v, want %s", got, want)
	}
	// A text over the budget runs alone; only missing texts are planned.
	m.opts.BatchTokens = 6
	got, err = m.planBatches(tw, inputs, []int{1, 6, 0})
	if err != nil {
		t.Fatal(err)
	}
	if want := "[[1] [6] [0]]"; fmt.Sprint(got) != want {
		t.Errorf("batches %v, want %s", got, want)
	}
}
