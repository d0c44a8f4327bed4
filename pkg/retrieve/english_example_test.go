package retrieve_test

import (
	"fmt"

	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/retrieve"
)

// Lucene's English analysis: the possessive goes, stop words go, the rest is Porter-stemmed.
func ExampleEnglishAnalyzer() {
	fmt.Println(retrieve.EnglishAnalyzer(nil, "Post the team's messages to a Slack channel"))
	fmt.Println(retrieve.PorterStem("generalizations"))
	// Output:
	// [post team messag slack channel]
	// gener
}

// The stemmed BM25 with Pyserini's parameters finds "messages" from "messaging".
func ExampleNewLuceneBM25() {
	docs := []bench.Doc{
		{ID: "slack", Title: "Slack", Text: "Post messages to a channel"},
		{ID: "mail", Title: "Mail", Text: "Send an email"},
	}
	bm := retrieve.NewLuceneBM25(docs, retrieve.PyseriniBM25Params())
	c, _ := bm.Search("messaging my channel", 5)
	fmt.Println(bm.Name(), c[0].ID, len(c))
	// Output:
	// BM25 (English, k1=0.9, b=0.4) slack 1
}

// Reciprocal-rank fusion of two rankings of the same corpus: both rank mail first, 2/(60+1).
func ExampleNewRRF() {
	docs := []bench.Doc{
		{ID: "slack", Title: "Slack", Text: "Post messages to a channel"},
		{ID: "mail", Title: "Mail", Text: "Send an email message"},
		{ID: "calendar", Title: "Calendar", Text: "Create an event"},
	}
	f, _ := retrieve.NewRRF(retrieve.NewBM25(docs, retrieve.DefaultBM25Params()), retrieve.NewTFIDF(docs, retrieve.TFIDFParams{}))
	c, _ := f.Search("send a message", 2)
	fmt.Printf("%s: %s %.5f\n", f.Name(), c[0].ID, c[0].Score)
	// Output:
	// RRF(BM25 + TF-IDF): mail 0.03279
}
