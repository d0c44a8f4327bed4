package tokenizer

// runeRange is an inclusive range of code points.
type runeRange struct{ lo, hi rune }

// runeClass is a code point with its canonical combining class.
type runeClass struct {
	r   rune
	ccc uint8
}

// runeSpan maps a code point to a sequence of runes stored elsewhere (start, length).
type runeSpan struct {
	r     rune
	start uint16
	n     uint16
}

// inRanges reports whether r lies in one of the sorted, disjoint ranges.
func inRanges(r rune, ranges []runeRange) bool {
	lo, hi := 0, len(ranges)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		switch {
		case r < ranges[mid].lo:
			hi = mid
		case r > ranges[mid].hi:
			lo = mid + 1
		default:
			return true
		}
	}
	return false
}

// findSpan returns the index of r in the sorted spans, or -1.
func findSpan(r rune, spans []runeSpan) int {
	lo, hi := 0, len(spans)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		switch {
		case r < spans[mid].r:
			hi = mid
		case r > spans[mid].r:
			lo = mid + 1
		default:
			return mid
		}
	}
	return -1
}

// isOther reports the unicode_categories crate's is_other: Cc, Cf or Co (Unicode 9).
func isOther(r rune) bool { return inRanges(r, otherRanges[:]) }

// isNonspacingMark reports Mn (Unicode 9), the marks that accent stripping removes.
func isNonspacingMark(r rune) bool { return inRanges(r, nonspacingMarkRanges[:]) }

// isWhitespace reports Rust's char::is_whitespace (the White_Space property).
func isWhitespace(r rune) bool {
	if r < 0x80 {
		return asciiClass[r] == classSpace
	}
	return inRanges(r, whitespaceRanges[:])
}

// isChineseChar reports the CJK blocks that BertNormalizer surrounds with spaces, with the exact
// ranges of the Rust tokenizers crate (which differ slightly from the Python BERT reference).
func isChineseChar(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) ||
		(r >= 0x3400 && r <= 0x4DBF) ||
		(r >= 0x20000 && r <= 0x2A6DF) ||
		(r >= 0x2A700 && r <= 0x2B73F) ||
		(r >= 0x2B740 && r <= 0x2B81F) ||
		(r >= 0x2B920 && r <= 0x2CEAF) ||
		(r >= 0xF900 && r <= 0xFAFF) ||
		(r >= 0x2F800 && r <= 0x2FA1F)
}

// combiningClass returns the canonical combining class of r (Unicode 9).
func combiningClass(r rune) uint8 {
	if r < 0x300 {
		return 0
	}
	lo, hi := 0, len(combiningClasses)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		switch {
		case r < combiningClasses[mid].r:
			hi = mid
		case r > combiningClasses[mid].r:
			lo = mid + 1
		default:
			return combiningClasses[mid].ccc
		}
	}
	return 0
}

// Hangul syllable decomposition constants (Unicode chapter 3.12).
const (
	hangulSBase  = 0xAC00
	hangulLBase  = 0x1100
	hangulVBase  = 0x1161
	hangulTBase  = 0x11A7
	hangulTCount = 28
	hangulNCount = 21 * hangulTCount
	hangulSCount = 19 * hangulNCount
)

// appendDecomposition appends the full canonical decomposition of r (r itself when it has none).
func appendDecomposition(dst []rune, r rune) []rune {
	if r < 0xC0 {
		return append(dst, r)
	}
	if r >= hangulSBase && r < hangulSBase+hangulSCount {
		s := r - hangulSBase
		dst = append(dst, hangulLBase+s/hangulNCount, hangulVBase+(s%hangulNCount)/hangulTCount)
		if t := s % hangulTCount; t > 0 {
			dst = append(dst, hangulTBase+t)
		}
		return dst
	}
	if i := findSpan(r, decompositions[:]); i >= 0 {
		sp := decompositions[i]
		return append(dst, decompositionRunes[sp.start:sp.start+sp.n]...)
	}
	return append(dst, r)
}

// appendLower appends Rust's char::to_lowercase of a non-ASCII rune as UTF-8.
func appendLower(dst []byte, r rune) []byte {
	if i := findSpan(r, lowercases[:]); i >= 0 {
		sp := lowercases[i]
		for _, l := range lowercaseRunes[sp.start : sp.start+sp.n] {
			dst = appendRune(dst, l)
		}
		return dst
	}
	return appendRune(dst, r)
}

// Byte classes of ASCII characters for the BERT pre-tokenizer and normaliser.
const (
	classWord    = iota // letters, digits: part of a word
	classSpace          // Rust char::is_whitespace: \t \n \v \f \r and space
	classPunct          // char::is_ascii_punctuation
	classControl        // other Cc characters: removed by clean_text
)

var asciiClass = func() (c [128]uint8) {
	for b := 0; b < 0x20; b++ {
		c[b] = classControl
	}
	c[0x7F] = classControl
	for _, b := range []byte{'\t', '\n', '\v', '\f', '\r', ' '} {
		c[b] = classSpace
	}
	for _, b := range []byte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~") {
		c[b] = classPunct
	}
	return c
}()
