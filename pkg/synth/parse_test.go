package synth

import (
	"math"
	"reflect"
	"testing"

	"github.com/rated-dev/rated/pkg/catalog"
)

func TestParseQueries(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want []string
	}{
		{"json array", `["Find flights to Rome", "Book a table for two"]`,
			[]string{"Find flights to Rome", "Book a table for two"}},
		{"json in fence with prose", "Sure! Here are the queries:\n```json\n[\"a b c d e\", \"f g h\"]\n```\nHope this helps.",
			[]string{"a b c d e", "f g h"}},
		{"json objects", `[{"query": "What is the weather in Oslo?"}, {"text": "Send mail to Bob"}]`,
			[]string{"What is the weather in Oslo?", "Send mail to Bob"}},
		{"numbered with prose", "Here are 3 queries:\n1. First query here\n2) Second one\n(3) Third: with colon\nLet me know if you need more.",
			[]string{"First query here", "Second one", "Third: with colon"}},
		{"bullets and emphasis", "- **Translate this to French**\n* \"Is it raining?\"\n• Query: show my stock",
			[]string{"Translate this to French", "Is it raining?", "show my stock"}},
		{"Q labels", "Q1: How tall is Everest?\nQuery 2: Who wrote Hamlet?",
			[]string{"How tall is Everest?", "Who wrote Hamlet?"}},
		{"plain lines without markers", "User queries:\nWhat is the time in Tokyo\n\nConvert 5 USD to EUR",
			[]string{"What is the time in Tokyo", "Convert 5 USD to EUR"}},
		{"brackets that are not JSON fall back to list", "1. Use [brackets] here\n2. And here",
			[]string{"Use [brackets] here", "And here"}},
		{"empty", "   \n\n", nil},
		{"refusal after a supplied list marker", "1. Sorry, I cannot help with that:", nil},
		{"prose items dropped", "1. Here are some requests:\n2. Book a hotel in Rome", []string{"Book a hotel in Rome"}},
		{"whitespace collapsed", "1.   lots   of\tspace  ", []string{"lots of space"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := ParseQueries(c.in)
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("ParseQueries(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestParseScore(t *testing.T) {
	cases := []struct {
		in      string
		want    float64
		wantErr bool
	}{
		{`{"score": 0.9}`, 0.9, false},
		{`The answer is {"score": "0.75"} as requested`, 0.75, false},
		{" 1.0", 1, false},
		{"0", 0, false},
		{".85", 0.85, false},
		{"Score: 0.6\nbecause ...", 0.6, false},
		{"score = 8/10", 0.8, false},
		{"90%", 0.9, false},
		{"9%", 0.09, false},
		{"8", 0.8, false},   // integer rating out of 10
		{"85", 0.85, false}, // integer percentage
		{"1.5", 0, true},    // off the scale, not an integer rating
		{"12/10", 0, true},
		{"-0.2", 0, true},
		{"no idea", 0, true},
		{"150", 0, true},
	}
	for _, c := range cases {
		got, err := ParseScore(c.in)
		if (err != nil) != c.wantErr {
			t.Errorf("ParseScore(%q) error = %v, wantErr %v", c.in, err, c.wantErr)
			continue
		}
		if !c.wantErr && math.Abs(got-c.want) > 1e-12 {
			t.Errorf("ParseScore(%q) = %g, want %g", c.in, got, c.want)
		}
	}
}

func TestWordCountAndTokens(t *testing.T) {
	if n := WordCount("  What's the weather,   in Paris? "); n != 5 {
		t.Fatalf("WordCount = %d, want 5", n)
	}
	got := wordTokens("What's the E-mail of Zoë? 42!")
	want := []string{"what", "s", "the", "e", "mail", "of", "zoë", "42"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("wordTokens = %q, want %q", got, want)
	}
}

func TestCopiesExample(t *testing.T) {
	words := catalog.Tool{Name: "wordsapi_get_word_definitions", Description: "Get definitions of an English word from WordsAPI.", Platform: "crewai"}
	weather := catalog.Tool{Name: "openweathermap", Description: "Current weather for a city.", Platform: "n8n"}
	translate := catalog.Tool{Name: "google_translate", Description: "Translate text between languages.", Platform: "n8n",
		Parameters: []catalog.Parameter{{Name: "text"}, {Name: "translateTo", Description: "target language"}}}
	cases := []struct {
		q    string
		t    catalog.Tool
		want bool
	}{
		// Content words {weather, vancouver}: "weather" is the example's only; none is the tool's.
		{"What's the weather in Vancouver?", words, true},
		// {word, serendipity, mean}: "word" is the tool's.
		{"What does the word serendipity mean?", words, false},
		// "weather" is in both the example and the tool: it counts for neither; {paris} in none.
		{"What's the weather in Paris?", weather, false},
		// {raining, tokyo}: "raining" is from the example's queries.
		{"Is it raining in Tokyo?", translate, true},
		// {translate, menu, french}: "translate" is the tool's.
		{"Translate this menu into French for me", translate, false},
		// One example word (osaka) against one tool word (language): a tie is not a copy.
		{"Which language do they speak in Osaka?", translate, false},
	}
	for _, c := range cases {
		if got := CopiesExample(c.q, c.t); got != c.want {
			t.Errorf("CopiesExample(%q, %s) = %v, want %v", c.q, c.t.Name, got, c.want)
		}
	}
}
