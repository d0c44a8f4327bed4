package retrieve_test

import (
	"fmt"

	"github.com/rated-dev/rated/pkg/retrieve"
)

// An encoder spec naming an OpenAI-compatible embeddings endpoint and its model.
func ExampleParseEndpointSpec() {
	cfg, err := retrieve.ParseEndpointSpec("openai:http://127.0.0.1:8080/v1#bge-small-en-v1.5")
	if err != nil {
		panic(err)
	}
	fmt.Println(cfg.BaseURL, cfg.Model)
	// Output: http://127.0.0.1:8080/v1 bge-small-en-v1.5
}
