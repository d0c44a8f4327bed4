package serve

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A line over the limit is refused whole, and the next line is read from its start.
func TestReadLineOverTheLimit(t *testing.T) {
	br := bufio.NewReaderSize(strings.NewReader(strings.Repeat("x", 100)+"\n"+`{"a":1}`+"\r\n"+"tail"), 16)
	for _, want := range []struct {
		line    string
		tooLong bool
		err     error
	}{{"", true, nil}, {`{"a":1}`, false, nil}, {"tail", false, io.EOF}} {
		line, tooLong, err := readLine(br, 20)
		if string(line) != want.line || tooLong != want.tooLong || err != want.err {
			t.Fatalf("readLine = %q, %v, %v; want %q, %v, %v", line, tooLong, err, want.line, want.tooLong, want.err)
		}
	}
}

// FuzzCheckLine: any line is either passed on as something the SDK decodes (one message, or a
// non-empty array of them), or answered with a valid JSON-RPC error response.
func FuzzCheckLine(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{`, `[]`, `[{"jsonrpc":"2.0","method":"x"}]`,
		`{"jsonrpc":"2.0","id":{"a":1},"method":3}`, `"str"`, `null`, `{"jsonrpc":"2.0","id":1,"result":{}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		b := []byte(strings.TrimSpace(line))
		if len(b) == 0 {
			return
		}
		code, msg, id := checkLine(b, false, 1<<20, true)
		if code == 0 {
			var batch []json.RawMessage
			if json.Unmarshal(b, &batch) == nil {
				for _, raw := range batch {
					if _, err := jsonrpc.DecodeMessage(raw); err != nil {
						t.Fatalf("passed a batch the SDK refuses: %v", err)
					}
				}
				return
			}
			if _, err := jsonrpc.DecodeMessage(b); err != nil {
				t.Fatalf("passed a line the SDK refuses: %v", err)
			}
			return
		}
		var rep struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(errorResponse(id, code, msg), &rep); err != nil || rep.JSONRPC != "2.0" || rep.Error == nil || rep.Error.Code != code || rep.ID == nil {
			t.Fatalf("error response for %q is not one: %v", line, err)
		}
	})
}
