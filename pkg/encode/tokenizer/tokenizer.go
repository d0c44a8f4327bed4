// Package tokenizer is a WordPiece tokenizer for BERT-style models that reads a Hugging Face
// tokenizer.json and produces exactly the ids of the reference Python `tokenizers` library:
// added-token extraction, BertNormalizer (clean_text, handle_chinese_chars, strip_accents,
// lowercase), BertPreTokenizer, the WordPiece model, TemplateProcessing or BertProcessing
// post-processors, truncation (longest-first for pairs), padding, attention masks and token type
// ids.
//
// The per-character Unicode data (control, mark and punctuation categories, NFD, lower-casing)
// is generated from the same Rust sources the reference is built from (see
// internal/gentables), so characters classified differently by Go's own unicode tables (newer
// Unicode) are still tokenized as the reference tokenizes them.
//
// A Tokenizer is safe for concurrent use once configured; SetTruncation and SetPadding must not
// run concurrently with encoding.
package tokenizer

import (
	"sync"
	"unicode/utf8"
)

// Tokenizer encodes text into model input ids. Create one with Load.
type Tokenizer struct {
	path string

	vocab         map[string]int32 // model vocabulary, as written in tokenizer.json
	continuations map[string]int32 // entries carrying the continuing-subword prefix, prefix removed
	unkID         int32
	maxWordChars  int // max_input_chars_per_word
	maxWordBytes  int // longest vocabulary entry, in bytes
	maxContBytes  int // longest continuation entry without its prefix, in bytes
	vocabSize     int

	normalizer  *bertNormalizer // nil: no normalizer
	preTokenize bool            // BertPreTokenizer; false: the whole text is one word
	rawAdded    addedMatcher    // added tokens matched on the raw text (normalized: false)
	normAdded   addedMatcher    // added tokens matched on the normalised text (normalized: true)
	post        postProcessor
	truncation  truncation
	padding     padding

	scratch sync.Pool // *scratch
}

// Encoding is one encoded sequence (or pair) after post-processing, truncation and padding.
type Encoding struct {
	// IDs are the token ids, special tokens included.
	IDs []int
	// TypeIDs are the token type (segment) ids: 0 for the first sequence, 1 for the second.
	TypeIDs []int
	// AttentionMask is 1 for real tokens and 0 for padding.
	AttentionMask []int
}

// Batch is a padded batch in the flat row-major layout ONNX Runtime takes
// (BatchSize × SeqLen), padded to the longest sequence of the batch.
type Batch struct {
	// InputIDs are the token ids, padded with the tokenizer's pad id.
	InputIDs []int64
	// AttentionMask is 1 for real tokens and 0 for padding.
	AttentionMask []int64
	// TokenTypeIDs are the segment ids (0 first sequence, 1 second).
	TokenTypeIDs []int64
	// BatchSize is the number of rows.
	BatchSize int
	// SeqLen is the length of every row.
	SeqLen int
}

// truncation holds the truncation parameters (LongestFirst strategy, stride 0).
type truncation struct {
	maxLen int  // 0: truncation disabled
	left   bool // drop tokens from the start instead of the end
}

// padding holds the padding applied by Encode and EncodePair.
type padding struct {
	enabled    bool
	fixed      int // 0: pad to the longest (a no-op for a single encoding)
	multipleOf int
	left       bool
	id         int32
	typeID     int32
}

// scratch holds the reusable buffers of one encoding.
type scratch struct {
	norm      []byte
	normState normalizeState
	segments  []segment
	normSegs  []segment
	first     []int32
	second    []int32
	ids       []int32 // post-processed ids
	types     []int32 // post-processed type ids
	ends      []int   // end of every row of a batch in ids
}

// VocabSize is the number of distinct tokens, added tokens included (the reference's
// get_vocab_size()).
func (t *Tokenizer) VocabSize() int { return t.vocabSize }

// PadID is the id used for padding: the tokenizer.json padding pad_id, else the id of [PAD], else 0.
func (t *Tokenizer) PadID() int { return int(t.padding.id) }

// Path is the tokenizer.json file the tokenizer was loaded from.
func (t *Tokenizer) Path() string { return t.path }

// TokenID returns the id of a vocabulary entry or added token.
func (t *Tokenizer) TokenID(token string) (int, bool) {
	if id, ok := t.vocab[token]; ok {
		return int(id), true
	}
	for _, m := range []*addedMatcher{&t.rawAdded, &t.normAdded} {
		for _, a := range m.tokens {
			if a.content == token {
				return int(a.id), true
			}
		}
	}
	return 0, false
}

// Truncation returns the maximum length of an encoding (special tokens included), 0 when
// truncation is disabled.
func (t *Tokenizer) Truncation() int { return t.truncation.maxLen }

// SetTruncation sets the maximum length of an encoding, special tokens included (the
// reference's enable_truncation(max_length), longest-first for pairs); 0 disables truncation.
// It overrides the truncation configured in tokenizer.json.
func (t *Tokenizer) SetTruncation(maxLen int) error {
	if maxLen < 0 {
		return errorf(t.path, "truncation length %d is negative", maxLen)
	}
	if maxLen > 0 && maxLen < t.post.nSingle {
		return errorf(t.path, "truncation length %d is shorter than the %d special tokens added to every sequence", maxLen, t.post.nSingle)
	}
	t.truncation.maxLen = maxLen
	return nil
}

// SetPadding makes Encode and EncodePair pad every encoding to a fixed length (the reference's
// enable_padding(length=n)); 0 disables padding. It overrides the padding configured in
// tokenizer.json. EncodeBatch always pads to the longest sequence of the batch.
func (t *Tokenizer) SetPadding(length int) error {
	if length < 0 {
		return errorf(t.path, "padding length %d is negative", length)
	}
	if length == 0 {
		t.padding.enabled = false
		return nil
	}
	t.padding.enabled = true
	t.padding.fixed = length
	t.padding.multipleOf = 0
	return nil
}

// Encode encodes one text with special tokens, truncation and padding as configured.
func (t *Tokenizer) Encode(text string) Encoding {
	sc := t.getScratch()
	defer t.scratch.Put(sc)
	limit := t.singleLimit(t.truncation)
	sc.first = t.appendSequence(sc.first[:0], text, sc, limit)
	return t.finish(sc, false, t.truncation)
}

// EncodePair encodes a pair (for cross-encoders: query, document) as
// [CLS] first [SEP] second [SEP] with type ids 0 then 1, truncating longest-first.
func (t *Tokenizer) EncodePair(first, second string) Encoding {
	sc := t.getScratch()
	defer t.scratch.Put(sc)
	sc.first = t.appendSequence(sc.first[:0], first, sc, 0)
	sc.second = t.appendSequence(sc.second[:0], second, sc, 0)
	return t.finish(sc, true, t.truncation)
}

// EncodeBatch encodes texts, truncating each to maxLen tokens (special tokens included; 0 keeps
// the tokenizer's truncation setting) and padding every row to the longest of the batch.
func (t *Tokenizer) EncodeBatch(texts []string, maxLen int) Batch {
	return t.encodeBatch(len(texts), func(i int) (string, string, bool) { return texts[i], "", false }, maxLen)
}

// EncodePairBatch encodes pairs (first[i], second[i]) like EncodePair, truncating each to maxLen
// tokens (0 keeps the tokenizer's truncation) and padding to the longest of the batch. It
// panics if the two slices differ in length.
func (t *Tokenizer) EncodePairBatch(first, second []string, maxLen int) Batch {
	if len(first) != len(second) {
		panic("tokenizer: EncodePairBatch: slices of different lengths")
	}
	return t.encodeBatch(len(first), func(i int) (string, string, bool) { return first[i], second[i], true }, maxLen)
}

func (t *Tokenizer) encodeBatch(n int, item func(int) (string, string, bool), maxLen int) Batch {
	trunc := t.truncation
	if maxLen > 0 {
		trunc.maxLen = maxLen
	}
	sc := t.getScratch()
	defer t.scratch.Put(sc)
	// Rows are encoded once into a shared buffer, then laid out padded.
	ids, types, ends := sc.ids[:0], sc.types[:0], sc.ends[:0]
	longest := 0
	for i := 0; i < n; i++ {
		a, b, pair := item(i)
		if pair {
			sc.first = t.appendSequence(sc.first[:0], a, sc, 0)
			sc.second = t.appendSequence(sc.second[:0], b, sc, 0)
		} else {
			sc.first = t.appendSequence(sc.first[:0], a, sc, t.singleLimit(trunc))
			sc.second = sc.second[:0]
		}
		ids, types = t.postProcess(ids, types, sc.first, sc.second, pair, trunc)
		ends = append(ends, len(ids))
		start := 0
		if i > 0 {
			start = ends[i-1]
		}
		longest = max(longest, len(ids)-start)
	}
	size := n * longest
	all := make([]int64, 3*size) // one allocation for the three tensors
	out := Batch{
		InputIDs:      all[:size:size],
		AttentionMask: all[size : 2*size : 2*size],
		TokenTypeIDs:  all[2*size:],
		BatchSize:     n,
		SeqLen:        longest,
	}
	start := 0
	for i, end := range ends {
		rowLen := end - start
		row := i * longest
		off := row
		if t.padding.left {
			off = row + longest - rowLen
		}
		for j := 0; j < longest; j++ {
			out.InputIDs[row+j] = int64(t.padding.id)
			out.TokenTypeIDs[row+j] = int64(t.padding.typeID)
		}
		for j := 0; j < rowLen; j++ {
			out.InputIDs[off+j] = int64(ids[start+j])
			out.TokenTypeIDs[off+j] = int64(types[start+j])
			out.AttentionMask[off+j] = 1
		}
		start = end
	}
	sc.ids, sc.types, sc.ends = ids, types, ends
	return out
}

func (t *Tokenizer) getScratch() *scratch {
	if sc, ok := t.scratch.Get().(*scratch); ok {
		return sc
	}
	return &scratch{}
}

// singleLimit is the number of model tokens after which tokenizing a single sequence can stop:
// right truncation keeps only the first maxLen minus the special tokens (0: no limit).
func (t *Tokenizer) singleLimit(trunc truncation) int {
	if trunc.maxLen == 0 || trunc.left || trunc.maxLen < t.post.nSingle {
		return 0
	}
	// One token more than kept would be enough; stopping at the kept count is exact too.
	return max(trunc.maxLen-t.post.nSingle, 1)
}

// finish post-processes the sequences in sc into an Encoding and pads it.
func (t *Tokenizer) finish(sc *scratch, pair bool, trunc truncation) Encoding {
	ids, types := t.postProcess(sc.ids[:0], sc.types[:0], sc.first, sc.second, pair, trunc)
	sc.ids, sc.types = ids, types
	n := len(ids)
	target := n
	if t.padding.enabled {
		if t.padding.fixed > 0 {
			target = t.padding.fixed
		}
		if m := t.padding.multipleOf; m > 0 && target%m != 0 {
			target += m - target%m
		}
		target = max(target, n)
	}
	// One allocation holds the three slices.
	all := make([]int, 3*target)
	enc := Encoding{IDs: all[:target:target], TypeIDs: all[target : 2*target : 2*target], AttentionMask: all[2*target:]}
	off := 0
	if t.padding.left {
		off = target - n
	}
	for j := 0; j < target; j++ {
		enc.IDs[j] = int(t.padding.id)
		enc.TypeIDs[j] = int(t.padding.typeID)
	}
	for j := 0; j < n; j++ {
		enc.IDs[off+j] = int(ids[j])
		enc.TypeIDs[off+j] = int(types[j])
		enc.AttentionMask[off+j] = 1
	}
	return enc
}

// appendSequence appends the model ids of text (no special tokens) to ids. With limit > 0 it
// may stop once limit ids are there (the rest would be truncated away).
func (t *Tokenizer) appendSequence(ids []int32, text string, sc *scratch, limit int) []int32 {
	sc.segments = t.rawAdded.split(sc.segments[:0], text)
	for _, seg := range sc.segments {
		if limit > 0 && len(ids) >= limit {
			break
		}
		if seg.id >= 0 {
			ids = append(ids, seg.id)
			continue
		}
		piece := text[seg.start:seg.end]
		var norm []byte
		if t.normalizer != nil {
			sc.norm = t.normalizer.appendNormalized(sc.norm[:0], piece, &sc.normState)
			norm = sc.norm
		} else {
			norm = append(sc.norm[:0], piece...)
			sc.norm = norm
		}
		if len(t.normAdded.tokens) == 0 {
			ids = t.appendWords(ids, norm, limit)
			continue
		}
		normText := string(norm)
		sc.normSegs = t.normAdded.split(sc.normSegs[:0], normText)
		for _, ns := range sc.normSegs {
			if ns.id >= 0 {
				ids = append(ids, ns.id)
				continue
			}
			ids = t.appendWords(ids, []byte(normText[ns.start:ns.end]), limit)
		}
	}
	return ids
}

// appendWords runs the BERT pre-tokenizer over normalised text (split on white space, isolate
// punctuation) and WordPiece over every word.
func (t *Tokenizer) appendWords(ids []int32, norm []byte, limit int) []int32 {
	if !t.preTokenize {
		if len(norm) > 0 {
			ids = t.wordPiece(ids, norm)
		}
		return ids
	}
	wordStart := -1
	for i := 0; i < len(norm); {
		b := norm[i]
		size := 1
		class := uint8(classWord)
		if b < utf8.RuneSelf {
			if c := asciiClass[b]; c == classSpace || c == classPunct {
				class = c
			}
		} else {
			var r rune
			r, size = utf8.DecodeRune(norm[i:])
			if inRanges(r, whitespaceRanges[:]) {
				class = classSpace
			} else if inRanges(r, punctuationRanges[:]) {
				class = classPunct
			}
		}
		if class == classWord {
			if wordStart < 0 {
				wordStart = i
			}
			i += size
			continue
		}
		if wordStart >= 0 {
			ids = t.wordPiece(ids, norm[wordStart:i])
			wordStart = -1
			if limit > 0 && len(ids) >= limit {
				return ids
			}
		}
		if class == classPunct {
			ids = t.wordPiece(ids, norm[i:i+size])
			if limit > 0 && len(ids) >= limit {
				return ids
			}
		}
		i += size
	}
	if wordStart >= 0 {
		ids = t.wordPiece(ids, norm[wordStart:])
	}
	return ids
}

// wordPiece appends the greedy longest-match-first WordPiece ids of one word, or the unknown
// token when the word is too long or cannot be covered by the vocabulary.
func (t *Tokenizer) wordPiece(ids []int32, word []byte) []int32 {
	if len(word) > t.maxWordChars && utf8.RuneCount(word) > t.maxWordChars {
		return append(ids, t.unkID)
	}
	mark := len(ids)
	for start := 0; start < len(word); {
		limit := t.maxContBytes
		if start == 0 {
			limit = t.maxWordBytes
		}
		end := len(word)
		if end-start > limit {
			end = start + limit
			for end > start && !utf8.RuneStart(word[end]) {
				end--
			}
		}
		found := false
		for end > start {
			var id int32
			var ok bool
			if start == 0 {
				id, ok = t.vocab[string(word[:end])]
			} else {
				id, ok = t.continuations[string(word[start:end])]
			}
			if ok {
				ids = append(ids, id)
				found = true
				break
			}
			end--
			for end > start && !utf8.RuneStart(word[end]) {
				end--
			}
		}
		if !found {
			return append(ids[:mark], t.unkID)
		}
		start = end
	}
	return ids
}
