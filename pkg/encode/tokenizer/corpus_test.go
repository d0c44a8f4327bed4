package tokenizer

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rated-dev/rated/internal/testassets"
)

// unicodeSamples are hand-picked strings covering what BERT normalisation must get right.
var unicodeSamples = []string{
	// Accents, precomposed and combining.
	"Café au lait", "naïve façade", "Ångström", "Zürich Straße", "São Paulo", "Đà Nẵng", "Łódź", "Ærøskøbing",
	"e\u0301te\u0301", "a\u0308\u0301", "q\u0323\u0307", "o\u0328\u0304", "A\u030A", "\u0301leading mark",
	"ÉCOLE NORMALE SUPÉRIEURE", "İstanbul İzmir", "ıi Iİ", "ß ẞ STRASSE", "ΟΔΟΣ οδός Ελληνικά", "ǅungla ǈ",
	"Ⅻ ⅻ Ⅷ", "ﬁnance ﬂow", "ＡＢＣ ｆｕｌｌｗｉｄｔｈ １２３", "𝐀𝐁𝐂 𝕏", "½ ¾ ² ³", "™ © ®",
	// CJK, kana, Hangul.
	"東京タワー", "北京欢迎你", "日本語のテキストです。", "한국어 문장입니다", "中文，标点！", "𠀀𠀁 𪜀 𫝀 𫠠 𬺰",
	"豈 更 車", "丽 丸", "〇〻", "ｶﾀｶﾅ ﾊﾝｶｸ",
	// Emoji and symbols.
	"👍🏽 thumbs", "👨‍👩‍👧 family", "🇫🇷🇩🇪", "🥲 🫠 🪿", "❤️ ♥", "☃ ★ ☆", "→ ← ↔ ⇒", "∑ ∫ √ ∞ ≈ ≠",
	// Right-to-left and other scripts.
	"مرحبا بالعالم", "السَّلَامُ عَلَيْكُمْ", "שָׁלוֹם עולם", "नमस्ते दुनिया", "สวัสดีชาวโลก", "Привет, мир!",
	"ქართული", "Հայերեն", "ᚠᚢᚦᚨᚱᚲ", "ꦗꦮ", "\u0d15\u0d3b", "\U0001e944x", "ᏣᎳᎩ",
	// Control, format, zero-width and white-space characters.
	"a\x00b", "tab\there", "line\nbreak", "cr\rlf", "vt\vff\f", "bell\x07", "del\x7f", "nel\u0085",
	"zero\u200bwidth", "zw\u200cnj\u200dj", "bom\ufeffin", "soft\u00adhyphen", "nb\u00a0sp", "ideo\u3000space",
	"line\u2028para\u2029", "bidi\u202eevil\u202c", "tag\U000e0041\U000e0042", "pua\ue000\uf8ff", "replacement\ufffd",
	"\u2060word\u2061joiner", "\u180emongolian", "variation\ufe0f", "thin\u2009space", "nnbsp\u202f", "ogham\u1680",
	// Punctuation beyond ASCII, including code points categorised after Unicode 9.
	"«quotes» „low“ ‘single’", "dash–en—em―bar", "ellipsis… bullet•", "¿Qué? ¡Sí!", "§ ¶ † ‡", "⸘ ⸻ ⹀ ⹂ ⹎ ⹏ ⹓",
	"𝄞 music", "‼ ⁇ ⁈", "〈angle〉 【lenticular】", "﹏wavy", "＃＠！",
	// Special tokens inside text.
	"[CLS]", "[SEP] [SEP]", "hello[MASK]world", "[mask] lower", "[UNK][PAD]", "[[CLS]]", "[CLS", "##ing ##",
	"x[SEP]y", "[MASK][MASK][MASK]", "a [MASK] b  [SEP]  c", "word[CLS]word [CLS] é[CLS]", "  [MASK]",
	"Tool-Call tool-callTOOL-CALL tool–call", "[SEP]\t\n[SEP]",
}

// loadToolDescriptions reads testdata/tool_descriptions.txt.
func loadToolDescriptions(t testing.TB) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "tool_descriptions.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return out
}

// loadQueries returns the 765 real ToolBench queries.
func loadQueries(t testing.TB) []string {
	t.Helper()
	q := testassets.ToolBenchQueries(t)
	if len(q) != 765 {
		t.Fatalf("%d ToolBench queries, want 765", len(q))
	}
	return q
}

// runePools are code point ranges that random strings draw from.
var runePools = [][2]rune{
	{0x20, 0x7E}, {0x20, 0x7E}, {0x00, 0x1F}, {0xA0, 0x24F}, {0x300, 0x36F}, {0x370, 0x3FF}, {0x400, 0x4FF},
	{0x590, 0x6FF}, {0x900, 0x97F}, {0xE00, 0xE7F}, {0x1100, 0x11FF}, {0x1AB0, 0x1AFF}, {0x1DC0, 0x1DFF},
	{0x1E00, 0x1EFF}, {0x2000, 0x206F}, {0x20A0, 0x20CF}, {0x2100, 0x214F}, {0x2E00, 0x2E7F}, {0x3000, 0x303F},
	{0x3040, 0x30FF}, {0x4E00, 0x9FFF}, {0xAC00, 0xD7A3}, {0xFB00, 0xFB4F}, {0xFE00, 0xFE0F}, {0xFF00, 0xFFEF},
	{0xFFF0, 0xFFFF}, {0x1F300, 0x1FAFF}, {0x1D400, 0x1D7FF}, {0x20000, 0x2A6DF}, {0x2B800, 0x2B93F},
	{0xE0000, 0xE007F}, {0xE000, 0xE0FF}, {0x0, 0x10FFFF},
}

// randomRunes returns n valid random runes from one pool (surrogates skipped).
func randomRunes(rng *rand.Rand, n int) string {
	pool := runePools[rng.IntN(len(runePools))]
	var b strings.Builder
	for b.Len() == 0 || utf8.RuneCountInString(b.String()) < n {
		r := pool[0] + rune(rng.IntN(int(pool[1]-pool[0]+1)))
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

var separators = []string{" ", " ", " ", "", "  ", "\n", "\t", ", ", ". ", "\u00a0", "\u200b", "-", "/", "_", "'", "\u3000", "\r\n", "!?", "…"}

// mutateCase changes the case of s the way real inputs vary.
func mutateCase(rng *rand.Rand, s string) string {
	switch rng.IntN(6) {
	case 0:
		return strings.ToUpper(s)
	case 1:
		return strings.ToLower(s)
	case 2:
		words := strings.Fields(s)
		for i, w := range words {
			r, size := utf8.DecodeRuneInString(w)
			words[i] = strings.ToUpper(string(r)) + w[size:]
		}
		return strings.Join(words, " ")
	}
	return s
}

// buildCorpus returns at least 5,000 varied strings: tool descriptions, ToolBench queries,
// unicode samples, special cases, very long inputs and seeded random mixes of all of them.
func buildCorpus(t testing.TB, seed uint64) []string {
	descs := loadToolDescriptions(t)
	queries := loadQueries(t)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var corpus []string
	corpus = append(corpus, descs...)
	corpus = append(corpus, queries...)
	corpus = append(corpus, unicodeSamples...)
	corpus = append(corpus, "", " ", "   ", "\t\n", "\u00a0\u3000", "\x00", "\u200b", "\ufeff", ".", "a", "A", "!!!", "...")
	// Words around max_input_chars_per_word (100), before and after normalisation.
	for _, n := range []int{99, 100, 101, 150, 400} {
		corpus = append(corpus, strings.Repeat("a", n), strings.Repeat("é", n), strings.Repeat("e\u0301", n),
			"prefix "+strings.Repeat("xyz", n/3+1)+" suffix", strings.Repeat("東", n))
	}
	// Very long inputs (truncation).
	for i := 0; i < 30; i++ {
		var b strings.Builder
		for b.Len() < 2000+rng.IntN(20000) {
			if rng.IntN(2) == 0 {
				b.WriteString(descs[rng.IntN(len(descs))])
			} else {
				b.WriteString(queries[rng.IntN(len(queries))])
			}
			b.WriteString(separators[rng.IntN(len(separators))])
		}
		corpus = append(corpus, b.String())
	}
	pieces := append(append(append([]string{}, descs...), queries...), unicodeSamples...)
	for len(corpus) < 5600 {
		var b strings.Builder
		parts := 1 + rng.IntN(6)
		for p := 0; p < parts; p++ {
			if p > 0 {
				b.WriteString(separators[rng.IntN(len(separators))])
			}
			switch rng.IntN(5) {
			case 0, 1:
				piece := pieces[rng.IntN(len(pieces))]
				if rng.IntN(3) == 0 {
					// A random slice of a piece, cut on rune boundaries.
					rs := []rune(piece)
					i := rng.IntN(len(rs))
					j := i + rng.IntN(len(rs)-i) + 1
					piece = string(rs[i:j])
				}
				b.WriteString(mutateCase(rng, piece))
			case 2:
				b.WriteString(randomRunes(rng, 1+rng.IntN(8)))
			case 3:
				words := strings.Fields(pieces[rng.IntN(len(pieces))])
				if len(words) > 0 {
					b.WriteString(words[rng.IntN(len(words))])
				}
				b.WriteString(randomRunes(rng, 1+rng.IntN(3)))
			default:
				b.WriteString(unicodeSamples[rng.IntN(len(unicodeSamples))])
			}
		}
		corpus = append(corpus, b.String())
	}
	return corpus
}

// buildPairs returns (first, second) pairs: queries with tool descriptions (cross-encoder use),
// and random pairs from the corpus, empty and very long members included.
func buildPairs(t testing.TB, corpus []string, seed uint64) [][2]string {
	descs := loadToolDescriptions(t)
	queries := loadQueries(t)
	rng := rand.New(rand.NewPCG(seed, seed+1))
	var pairs [][2]string
	for i := 0; i < 600; i++ {
		pairs = append(pairs, [2]string{queries[rng.IntN(len(queries))], descs[rng.IntN(len(descs))]})
	}
	for i := 0; i < 900; i++ {
		pairs = append(pairs, [2]string{corpus[rng.IntN(len(corpus))], corpus[rng.IntN(len(corpus))]})
	}
	pairs = append(pairs, [2]string{"", ""}, [2]string{"", "b"}, [2]string{"a", ""}, [2]string{" ", "\x00"})
	return pairs
}

// sweepTexts returns strings that put every code point of the planes used in practice (0–3, 14)
// and samples of the private-use planes between letters, "a<c>a", 64 per string, so that
// removal, white space, punctuation, decomposition and lower-casing of each are visible in the
// ids.
func sweepTexts() []string {
	var out []string
	var b strings.Builder
	n := 0
	add := func(r rune) {
		if r >= 0xD800 && r <= 0xDFFF {
			return
		}
		if n > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('a')
		b.WriteRune(r)
		b.WriteByte('a')
		n++
		if n == 64 {
			out = append(out, b.String())
			b.Reset()
			n = 0
		}
	}
	for r := rune(0); r < 0x40000; r++ {
		add(r)
	}
	for r := rune(0xE0000); r < 0xF0000; r++ {
		add(r)
	}
	for r := rune(0xF0000); r <= 0x10FFFF; r += 997 {
		add(r)
	}
	if n > 0 {
		out = append(out, b.String())
	}
	return out
}
