package serve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rated-dev/rated/pkg/serve"
)

// connect returns an MCP client session on the server over transport t.
func connect(t testing.TB, ct mcp.Transport) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func inMemory(t testing.TB) *mcp.ClientSession {
	t.Helper()
	srv := serve.NewMCPServer(newRouter(t), "test")
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	return connect(t, ct)
}

func call(t testing.TB, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// exercise runs the agent loop over an MCP session: list the tools, find tools for a request,
// report the outcome, and get tool errors (not protocol errors) for bad arguments.
func exercise(t *testing.T, cs *mcp.ClientSession) {
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if strings.Join(names, ",") != "find_tools,report_outcome" {
		t.Fatalf("tools %v", names)
	}
	res := call(t, cs, "find_tools", map[string]any{"query": "convert euros to dollars", "k": 3})
	if res.IsError {
		t.Fatalf("find_tools: %s", text(res))
	}
	var sel serve.SelectResponse
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &sel); err != nil || sel.DecisionID == "" || len(sel.Tools) != 3 {
		t.Fatalf("find_tools result %s: %v", raw, err)
	}
	res = call(t, cs, "report_outcome", map[string]any{"decision_id": sel.DecisionID, "tool": sel.Tools[0].ID, "executed": true, "latency_ms": 40})
	if res.IsError || !strings.Contains(text(res), `"recorded"`) {
		t.Fatalf("report_outcome: %s", text(res))
	}
	res = call(t, cs, "report_outcome", map[string]any{"decision_id": sel.DecisionID, "tool": sel.Tools[0].ID, "executed": true, "latency_ms": 40})
	if res.IsError || !strings.Contains(text(res), `"duplicate"`) {
		t.Fatalf("repeated report_outcome: %s", text(res))
	}
	for _, bad := range []struct {
		tool string
		args any
		want string
	}{
		{"find_tools", map[string]any{"query": ""}, "query"},
		{"find_tools", map[string]any{"query": 7}, "query"},
		{"find_tools", map[string]any{"query": "email", "k": 500}, "k"},
		// Tool errors name the argument at fault first, as the HTTP API's error body does.
		{"report_outcome", map[string]any{"decision_id": sel.DecisionID, "tool": "no/such/tool", "executed": true}, "tool: unknown tool"},
		{"report_outcome", map[string]any{"decision_id": "nope", "tool": sel.Tools[0].ID, "executed": true}, "decision_id: unknown or expired decision"},
		{"report_outcome", map[string]any{"decision_id": sel.DecisionID, "tool": sel.Tools[0].ID, "executed": false}, "executed: conflicting report"},
		{"report_outcome", map[string]any{"decision_id": sel.DecisionID, "tool": sel.Tools[1].ID}, "executed"},
		{"report_outcome", map[string]any{"decision_id": sel.DecisionID, "tool": sel.Tools[1].ID, "executed": true, "latency_ms": -1}, "latency_ms"},
		// The SDK's schema check, before our handlers, names the argument first too.
		{"find_tools", map[string]any{"query": "email", "foo": 1}, "foo"},
		{"find_tools", map[string]any{"k": 2}, "query"},
		// A key given twice (the SDK kept the last) is refused as over HTTP.
		{"find_tools", json.RawMessage(`{"query": "email", "query": "weather"}`), "query"},
		{"report_outcome", json.RawMessage(`{"decision_id": "x", "tool": "y", "executed": true, "executed": false}`), "executed"},
	} {
		res := call(t, cs, bad.tool, bad.args)
		if !res.IsError || !strings.HasPrefix(text(res), bad.want+": ") {
			t.Errorf("%s %v: error %v, text %q, want it to start with %q", bad.tool, bad.args, res.IsError, text(res), bad.want+": ")
		}
	}
}

func TestMCPInMemory(t *testing.T) { exercise(t, inMemory(t)) }

func TestMCPStreamableHTTP(t *testing.T) {
	ts := httptest.NewServer(serve.New(newRouter(t), serve.Options{MCP: true, Token: "tok"}).Handler())
	t.Cleanup(ts.Close) // after the session's cleanup: its event stream must close first
	cs := connect(t, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: bearerClient("tok")})
	exercise(t, cs)
	// Without the token the endpoint refuses to connect.
	c := mcp.NewClient(&mcp.Implementation{Name: "anon", Version: "1"}, nil)
	if _, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, nil); err == nil {
		t.Fatal("MCP without the bearer token connected")
	}
}

// FuzzMCPArguments sends arbitrary JSON objects as the arguments of both tools through the
// SDK: every call must end in a result (a tool error for bad input), never a protocol error or
// a crash.
func FuzzMCPArguments(f *testing.F) {
	cs := inMemory(f)
	f.Add(true, `{"query": "weather", "k": 2}`)
	f.Add(true, `{"query": "weather", "exclude": ["a", 1]}`)
	f.Add(false, `{"decision_id": "x", "tool": "y", "executed": true, "latency_ms": 1e308}`)
	f.Add(false, `{"decision_id": "", "tool": "", "executed": "no", "task_success": null}`)
	f.Fuzz(func(t *testing.T, find bool, args string) {
		var obj map[string]any
		if json.Unmarshal([]byte(args), &obj) != nil {
			return // the client sends a JSON object; invalid JSON never reaches the server
		}
		name := "report_outcome"
		if find {
			name = "find_tools"
		}
		call(t, cs, name, json.RawMessage(args))
	})
}

// bearerClient adds the token to every request.
func bearerClient(token string) *http.Client {
	return &http.Client{Transport: roundTripper(func(req *http.Request) (*http.Response, error) {
		req = req.Clone(req.Context())
		req.Header.Set("Authorization", "Bearer "+token)
		return http.DefaultTransport.RoundTrip(req)
	})}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestMCPHTTPRefusesMalformedMessages posts bodies that are not JSON-RPC messages to /mcp: each
// must come back as the JSON-RPC error the specification prescribes, in a JSON body a client can
// read (the SDK alone answers plain text), while a session's unknown method still gets the
// SDK's own "method not found".
func TestMCPHTTPRefusesMalformedMessages(t *testing.T) {
	ts := httptest.NewServer(serve.New(newRouter(t), serve.Options{MCP: true, MaxBodyBytes: 4096}).Handler())
	t.Cleanup(ts.Close)
	post := func(body, session string) (*http.Response, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		// A session's replies may come as one server-sent event.
		if i := strings.Index(string(raw), "data: "); i >= 0 {
			raw = []byte(strings.SplitN(string(raw[i+6:]), "\n", 2)[0])
		}
		var m map[string]any
		if len(raw) > 0 && resp.Header.Get("Content-Type") != "" && !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatalf("%q: body %q is not JSON: %v", body, raw, err)
			}
		}
		return resp, m
	}
	for _, c := range []struct {
		body   string
		status int
		code   float64
		id     any
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize"`, 400, -32700, nil},
		{`not json`, 400, -32700, nil},
		{``, 400, -32700, nil},
		{`[]`, 400, -32600, nil},
		{`{"jsonrpc":"2.0","id":7,"method":5}`, 400, -32600, 7.0},
		{`{"jsonrpc":"1.0","id":"a","method":"ping"}`, 400, -32600, "a"},
		{`[{"jsonrpc":"2.0","method":"ping","id":1}, 1]`, 400, -32600, nil},
		{`{"jsonrpc":"2.0","id":8,"method":"ping","params":"` + strings.Repeat("x", 5000) + `"}`, 413, -32600, nil},
		// The SDK answered these with error code 0.
		{`{"jsonrpc":"2.0","id":9,"method":"initialize","params":"x"}`, 400, -32602, 9.0},
		{`{"jsonrpc":"2.0","id":"b","method":"initialize","params":[1]}`, 400, -32602, "b"},
	} {
		resp, m := post(c.body, "")
		if resp.StatusCode != c.status || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Errorf("%.40q: status %d, content type %q; want %d, application/json", c.body, resp.StatusCode, resp.Header.Get("Content-Type"), c.status)
			continue
		}
		e, _ := m["error"].(map[string]any)
		if m["jsonrpc"] != "2.0" || e == nil || e["code"] != c.code || m["id"] != c.id || fmt.Sprint(e["message"]) == "" {
			t.Errorf("%.40q: response %v, want error code %v with id %v", c.body, m, c.code, c.id)
		}
	}
	// A well-formed session still reaches the SDK: initialize, then an unknown method.
	resp, m := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, "")
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" || m["result"] == nil {
		t.Fatalf("initialize: status %d, session %q, response %v", resp.StatusCode, session, m)
	}
	if resp, _ := post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, session); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: status %d", resp.StatusCode)
	}
	resp, m = post(`{"jsonrpc":"2.0","id":2,"method":"no/such/method"}`, session)
	if e, _ := m["error"].(map[string]any); e == nil || e["code"] != -32601.0 || m["id"] != 2.0 || resp.StatusCode >= 500 {
		t.Errorf("unknown method: status %d, response %v, want error -32601 with id 2", resp.StatusCode, m)
	}
}
