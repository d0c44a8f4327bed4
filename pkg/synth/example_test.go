package synth_test

import (
	"fmt"
	"strings"

	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/synth"
)

// An instruction-tuned generator gets one user turn asking for N first-person requests; a base
// model gets the continuation prompt, whose answer starts with "1. ".
func ExampleSynMessages() {
	tool := catalog.Tool{Name: "Brevo: Delete a contact", Platform: "n8n", Description: "Delete a contact. Consume the Brevo API",
		Parameters: []catalog.Parameter{{Name: "identifier", Type: "string", Description: "email or ID of the contact"}}}
	msgs, stop, prefix := synth.SynMessages(synth.StyleInstruct, tool, 5)
	fmt.Println(len(msgs), msgs[0].Role, stop == nil, prefix == "")
	for _, line := range strings.Split(msgs[0].Content, "\n")[2:7] {
		fmt.Println(line)
	}
	_, _, prefix = synth.SynMessages(synth.StyleContinuation, tool, 5)
	fmt.Printf("%q\n", prefix)
	// Output:
	// 1 user true true
	// Tool: Brevo: Delete a contact
	// Platform: n8n
	// Description: Delete a contact. Consume the Brevo API
	// Parameters:
	// - identifier (string): email or ID of the contact
	// "1. "
}
