package tokenizer

import "unicode/utf8"

// bertNormalizer is Hugging Face's BertNormalizer. The steps run in the reference order:
// clean_text (drop NUL, U+FFFD and Cc/Cf/Co, map white space to ' '), handle_chinese_chars
// (surround CJK ideographs with spaces), strip_accents (NFD, then drop Mn), lowercase
// (Rust's full char::to_lowercase, e.g. U+0130 → "i̇").
type bertNormalizer struct {
	cleanText    bool
	chineseChars bool
	stripAccents bool
	lowercase    bool
}

// markRune is a decomposed character waiting for canonical reordering.
type markRune struct {
	r   rune
	ccc uint8
}

// normalizeState carries the reusable buffers of one normalisation.
type normalizeState struct {
	pending []markRune // non-starters since the last starter (canonical ordering)
	decomp  []rune     // decomposition of the current character
}

// appendNormalized appends the normalised form of s to dst.
func (n *bertNormalizer) appendNormalized(dst []byte, s string, st *normalizeState) []byte {
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			i++
			if n.cleanText {
				if b == '\t' || b == '\n' || b == '\r' {
					b = ' '
				} else if b < 0x20 || b == 0x7F {
					continue
				}
			}
			if len(st.pending) > 0 {
				dst = n.flushMarks(dst, st)
			}
			if n.lowercase && 'A' <= b && b <= 'Z' {
				b += 'a' - 'A'
			}
			dst = append(dst, b)
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if n.cleanText {
			// An invalid byte decodes as U+FFFD, which clean_text drops as the reference drops
			// a real U+FFFD.
			if r == utf8.RuneError || isOther(r) {
				continue
			}
			if isWhitespace(r) {
				r = ' '
			}
		}
		if n.chineseChars && isChineseChar(r) {
			dst = n.decompose(dst, ' ', st)
			dst = n.decompose(dst, r, st)
			dst = n.decompose(dst, ' ', st)
			continue
		}
		dst = n.decompose(dst, r, st)
	}
	if len(st.pending) > 0 {
		dst = n.flushMarks(dst, st)
	}
	return dst
}

// decompose runs the NFD step (when accents are stripped) on one character and passes the
// result on to emit, holding combining marks back until their canonical order is known.
func (n *bertNormalizer) decompose(dst []byte, r rune, st *normalizeState) []byte {
	if !n.stripAccents {
		return n.emit(dst, r)
	}
	st.decomp = appendDecomposition(st.decomp[:0], r)
	for _, d := range st.decomp {
		ccc := combiningClass(d)
		if ccc == 0 {
			if len(st.pending) > 0 {
				dst = n.flushMarks(dst, st)
			}
			dst = n.emit(dst, d)
			continue
		}
		st.pending = append(st.pending, markRune{d, ccc})
	}
	return dst
}

// flushMarks emits the pending non-starters in canonical order (a stable sort by combining
// class, as unicode-normalization does).
func (n *bertNormalizer) flushMarks(dst []byte, st *normalizeState) []byte {
	p := st.pending
	for i := 1; i < len(p); i++ {
		for j := i; j > 0 && p[j-1].ccc > p[j].ccc; j-- {
			p[j-1], p[j] = p[j], p[j-1]
		}
	}
	for _, m := range p {
		dst = n.emit(dst, m.r)
	}
	st.pending = p[:0]
	return dst
}

// emit applies the per-character steps after NFD: drop Mn (when stripping accents), lower-case.
func (n *bertNormalizer) emit(dst []byte, r rune) []byte {
	if r < utf8.RuneSelf {
		if n.lowercase && 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return append(dst, byte(r))
	}
	if n.stripAccents && r >= 0x300 && isNonspacingMark(r) {
		return dst
	}
	if n.lowercase {
		return appendLower(dst, r)
	}
	return appendRune(dst, r)
}

// appendRune appends the UTF-8 encoding of r.
func appendRune(dst []byte, r rune) []byte { return utf8.AppendRune(dst, r) }
