package retrieve

import (
	"reflect"
	"testing"

	"github.com/rated-dev/rated/pkg/bench"
)

func TestTokenize(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"  ,;  ", nil},
		{"Hello, World!", []string{"hello", "world"}},
		{"snake_case-and.dots", []string{"snake", "case", "and", "dots"}},
		{"GPT4o v2.0 42", []string{"gpt4o", "v2", "0", "42"}},
		{"Ünïcode—DASH café", []string{"ünïcode", "dash", "café"}},
		{"repeat repeat", []string{"repeat", "repeat"}},
		{"Ⅻ½ ΣΑΣ", []string{"ⅻ½", "σασ"}},
	}
	for _, c := range cases {
		if got := Tokenize(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Tokenize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestDocText(t *testing.T) {
	cases := []struct {
		doc  bench.Doc
		want string
	}{
		{bench.Doc{Title: "weather", Text: "Get the forecast"}, "weather: Get the forecast"},
		{bench.Doc{Title: "weather"}, "weather"},
		{bench.Doc{Text: "Get the forecast"}, "Get the forecast"},
	}
	for _, c := range cases {
		if got := DocText(c.doc); got != c.want {
			t.Errorf("DocText(%+v) = %q, want %q", c.doc, got, c.want)
		}
	}
}
