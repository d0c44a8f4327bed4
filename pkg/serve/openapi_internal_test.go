package serve

import (
	"reflect"
	"slices"
	"sort"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/rated-dev/rated/internal/jsonkeys"
)

// TestOpenAPIRequestSchemasAreTheHandlersStructs: the request schemas of openapi.yaml list
// exactly the JSON fields of the structs the handlers decode (selectRequest, feedbackRequest),
// read from the structs themselves, so a field added to a handler without its documentation
// (or documented without a handler field) fails here.
func TestOpenAPIRequestSchemasAreTheHandlersStructs(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]any `yaml:"properties"`
			} `yaml:"schemas"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	for schema, v := range map[string]any{"SelectRequest": selectRequest{}, "FeedbackRequest": feedbackRequest{}} {
		var read, documented []string
		for name := range jsonkeys.Fields(reflect.TypeOf(v)) {
			read = append(read, name)
		}
		for name := range doc.Components.Schemas[schema].Properties {
			documented = append(documented, name)
		}
		sort.Strings(read)
		sort.Strings(documented)
		if len(read) == 0 || !slices.Equal(read, documented) {
			t.Errorf("schema %s documents %v, the handler reads %v", schema, documented, read)
		}
	}
}
