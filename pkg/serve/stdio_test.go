package serve_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/rated-dev/rated/pkg/serve"
)

// rpcReply is a JSON-RPC response as read back from the server's output.
type rpcReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// TestServeStdioSurvivesBadLines writes raw lines to the stdio server: a line that is not JSON,
// JSON that is not a message, a request whose method is not a string, a blank line, then a real
// initialize and tools/list. Each bad line is answered with the code JSON-RPC 2.0 prescribes
// (-32700 parse error, -32600 invalid request; the id echoed where the line has a usable one),
// and the session goes on: the SDK's own stdio transport ends at the first of them.
func TestServeStdioSurvivesBadLines(t *testing.T) {
	r := newRouter(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var log strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- serve.ServeStdio(ctx, r, "test", inR, outW, &log); outW.Close() }()
	replies := bufio.NewScanner(outR)
	replies.Buffer(make([]byte, 1<<20), 1<<20)
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	next := func() rpcReply {
		t.Helper()
		if !replies.Scan() {
			t.Fatalf("no reply: %v", replies.Err())
		}
		var rep rpcReply
		if err := json.Unmarshal(replies.Bytes(), &rep); err != nil {
			t.Fatalf("reply %q: %v", replies.Text(), err)
		}
		if rep.JSONRPC != "2.0" {
			t.Fatalf("reply %q: jsonrpc is not 2.0", replies.Text())
		}
		return rep
	}
	wantError := func(line string, code int, id, inMessage string) {
		t.Helper()
		send(line)
		rep := next()
		if rep.Error == nil || rep.Error.Code != code || string(rep.ID) != id || !strings.Contains(rep.Error.Message, inMessage) {
			t.Fatalf("%s: reply id %s error %+v, want code %d, id %s, a message containing %q", line, rep.ID, rep.Error, code, id, inMessage)
		}
	}
	wantError(`{"jsonrpc": "2.0", "id": 1, "method": `, -32700, "null", "line 1: parse error")
	send("")
	send("   ")
	wantError(`{}`, -32600, "null", "line 4: invalid request")
	wantError(`{"jsonrpc": "2.0", "id": "a", "method": 5}`, -32600, `"a"`, "line 5: invalid request")
	wantError(`[]`, -32600, "null", "an empty batch")
	wantError(`[{"jsonrpc": "2.0", "id": 2, "method": "ping"}, 3]`, -32600, "null", "batch element 1")
	// The SDK answered an initialize whose params are not an object with error code 0.
	wantError(`{"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": "x"}`, -32602, "3", "line 8: invalid params: initialize's params must be an object")

	send(`{"jsonrpc": "2.0", "id": 10, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}`)
	if rep := next(); rep.Error != nil || string(rep.ID) != "10" || !strings.Contains(string(rep.Result), `"serverInfo"`) {
		t.Fatalf("initialize: %+v %s", rep.Error, rep.Result)
	}
	send(`{"jsonrpc": "2.0", "method": "notifications/initialized"}`)
	wantError(`not json at all`, -32700, "null", "line 11: parse error")
	// Under 2025-06-18 the SDK ends the session at a batch: it is refused here instead.
	wantError(`[{"jsonrpc": "2.0", "id": 12, "method": "ping"}, {"jsonrpc": "2.0", "id": 13, "method": "ping"}]`, -32600, "null", "line 12: invalid request: JSON-RPC batches are not supported")
	send(`{"jsonrpc": "2.0", "id": 11, "method": "tools/list"}`)
	rep := next()
	if rep.Error != nil || string(rep.ID) != "11" || !strings.Contains(string(rep.Result), `"find_tools"`) || !strings.Contains(string(rep.Result), `"report_outcome"`) {
		t.Fatalf("tools/list: %+v %s", rep.Error, rep.Result)
	}
	inW.Close()
	select {
	case err := <-done:
		if err != nil && err != io.EOF {
			t.Fatalf("ServeStdio after end of input: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("ServeStdio did not end with its input")
	}
	for _, n := range []string{"line 1 refused", "line 4 refused", "line 5 refused", "line 8 refused", "line 11 refused", "line 12 refused"} {
		if !strings.Contains(log.String(), n) {
			t.Errorf("log %q lacks %q", log.String(), n)
		}
	}
}

// TestServeStdioAnswersEverythingBeforeItsInputEnded: a script that writes its requests and
// closes its end at once (printf … | rated serve --mcp stdio) gets every answer: the session
// ended with its input, dropping the requests still running.
func TestServeStdioAnswersEverythingBeforeItsInputEnded(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"find_tools","arguments":{"query":"send an email"}}}`,
		`{"jsonrpc":"2.0","id":"three","method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":4,"method":"ping"}`,
	}, "\n") + "\n"
	var out, log strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := serve.ServeStdio(ctx, newRouter(t), "test", strings.NewReader(in), &out, &log); err != nil && err != io.EOF {
		t.Fatalf("ServeStdio: %v", err)
	}
	got := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var rep rpcReply
		if err := json.Unmarshal([]byte(line), &rep); err != nil || rep.Error != nil {
			t.Fatalf("reply %q: %v %+v", line, err, rep.Error)
		}
		got[string(rep.ID)] = true
	}
	for _, id := range []string{"1", "2", `"three"`, "4"} {
		if !got[id] {
			t.Errorf("request %s not answered before the end of input:\n%s", id, out.String())
		}
	}
}
