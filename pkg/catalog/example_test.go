package catalog_test

import (
	"fmt"

	"github.com/rated-dev/rated/pkg/catalog"
)

// MakeID always gives an id that ValidateID accepts, whatever a crawled source holds.
func ExampleMakeID() {
	id := catalog.MakeID("langchain", "", "../../etc/Evil Tool")
	fmt.Println(id, catalog.ValidateID(id))
	fmt.Println(catalog.ValidateID("langchain//../../etc/evil_tool"))
	// Output:
	// langchain/_/etc/evil-tool <nil>
	// tool id "langchain//../../etc/evil_tool": empty segment (leading, trailing or doubled '/')
}
