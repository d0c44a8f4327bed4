package serve_test

import (
	"context"
	"encoding/json"
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
		args map[string]any
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
	} {
		res := call(t, cs, bad.tool, bad.args)
		if !res.IsError || !strings.Contains(text(res), bad.want) {
			t.Errorf("%s %v: error %v, text %q, want it to mention %q", bad.tool, bad.args, res.IsError, text(res), bad.want)
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
