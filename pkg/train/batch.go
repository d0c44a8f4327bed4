package train

import (
	"fmt"

	"github.com/rated-dev/rated/pkg/encode/tokenizer"
)

// Rows are token rows of one tower, padded to the bound sequence length, row-major [Rows, Seq].
type Rows struct {
	InputIDs      []int64
	AttentionMask []int64
	TokenTypeIDs  []int64
	Count         int
	Seq           int
}

// Batch is one step's input: for a shared encoder Queries holds all B(2+N) rows (queries,
// positives, negatives) and Docs is empty; for dual towers Queries has B rows and Docs B(1+N).
type Batch struct {
	Queries Rows
	Docs    Rows
}

// Example is one training pair with its hard negatives.
type Example struct {
	QueryID    string
	Query      string
	PositiveID string
	Positive   string
	// NegativeIDs and Negatives are the hard negatives (at least the artifacts' N are used).
	NegativeIDs []string
	Negatives   []string
	// Relevant holds every document relevant to the query (nil: only PositiveID); PlanBatches
	// keeps them out of the query's in-batch negatives.
	Relevant map[string]bool
}

// TextTokenizer turns texts into token rows of at most maxLen tokens, padded to the longest
// (pkg/encode/tokenizer's EncodeBatch).
type TextTokenizer interface {
	EncodeBatch(texts []string, maxLen int) tokenizer.Batch
	PadID() int
}

// Assembler builds step batches from examples: texts are prefixed, tokenized and padded to the
// bound sequence length; the rows are laid out as the training graph expects.
type Assembler struct {
	Artifacts   *Artifacts
	Tokenizer   TextTokenizer
	QueryPrefix string
	DocPrefix   string
}

// Assemble builds the batch of exactly Artifacts.Batch examples.
func (a *Assembler) Assemble(examples []Example) (*Batch, error) {
	art := a.Artifacts
	if len(examples) != art.Batch {
		return nil, fmt.Errorf("assemble: %d examples for a batch of %d", len(examples), art.Batch)
	}
	queries := make([]string, 0, art.Batch)
	positives := make([]string, 0, art.Batch)
	negatives := make([]string, 0, art.Batch*art.Negatives)
	for _, ex := range examples {
		if len(ex.Negatives) < art.Negatives {
			return nil, fmt.Errorf("assemble: query %s has %d negatives, the graph takes %d", ex.QueryID, len(ex.Negatives), art.Negatives)
		}
		queries = append(queries, a.QueryPrefix+ex.Query)
		positives = append(positives, a.DocPrefix+ex.Positive)
		for _, n := range ex.Negatives[:art.Negatives] {
			negatives = append(negatives, a.DocPrefix+n)
		}
	}
	docs := append(positives, negatives...)
	if art.Towers == TowersShared {
		return &Batch{Queries: a.rows(append(queries, docs...))}, nil
	}
	return &Batch{Queries: a.rows(queries), Docs: a.rows(docs)}, nil
}

func (a *Assembler) rows(texts []string) Rows {
	seq := a.Artifacts.Seq
	b := a.Tokenizer.EncodeBatch(texts, seq)
	return PadRows(b.InputIDs, b.AttentionMask, b.TokenTypeIDs, b.BatchSize, b.SeqLen, seq, int64(a.Tokenizer.PadID()))
}

// PadRows lays out [count, width] token rows (width <= seq) into [count, seq], padding with padID,
// mask 0 and type 0. typeIDs may be nil (all zero).
func PadRows(ids, mask, typeIDs []int64, count, width, seq int, padID int64) Rows {
	r := Rows{
		InputIDs:      make([]int64, count*seq),
		AttentionMask: make([]int64, count*seq),
		TokenTypeIDs:  make([]int64, count*seq),
		Count:         count,
		Seq:           seq,
	}
	for i := range count {
		for j := range seq {
			o := i*seq + j
			if j >= width {
				r.InputIDs[o] = padID
				continue
			}
			s := i*width + j
			r.InputIDs[o] = ids[s]
			r.AttentionMask[o] = mask[s]
			if typeIDs != nil {
				r.TokenTypeIDs[o] = typeIDs[s]
			}
		}
	}
	return r
}
