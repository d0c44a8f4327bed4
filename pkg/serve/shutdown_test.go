package serve_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rated-dev/rated/pkg/serve"
)

// mcpPost sends one JSON-RPC message to /mcp and returns the response (body read).
func mcpPost(t *testing.T, base, session, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("POST /mcp %s: %s", body, resp.Status)
	}
	return resp
}

// An open MCP event stream (GET /mcp) must not hold a graceful shutdown for the whole grace:
// shutdown ends it, and Serve returns nil.
func TestShutdownEndsMCPEventStreams(t *testing.T) {
	srv := serve.New(newRouter(t), serve.Options{MCP: true, Version: "test"})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	served := make(chan error, 1)
	// A grace far longer than a shutdown needs: with the stream left open, Serve would give up
	// only after it, with ErrShutdownGrace.
	go func() { served <- srv.Serve(ctx, ln, 20*time.Second) }()

	resp := mcpPost(t, base, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	session := resp.Header.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatal("initialize: no Mcp-Session-Id")
	}
	mcpPost(t, base, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	req, _ := http.NewRequest(http.MethodGet, base+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	stream, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	if stream.StatusCode != http.StatusOK || !strings.HasPrefix(stream.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("GET /mcp: %s %s", stream.Status, stream.Header.Get("Content-Type"))
	}
	// The stream is open: its first line (an SSE comment) has arrived.
	if _, err := bufio.NewReader(stream.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}

	stop() // SIGTERM
	if err := <-served; err != nil {
		t.Fatalf("Serve with an open MCP event stream: %v, want nil (the stream ended by the shutdown)", err)
	}
	if _, err := io.Copy(io.Discard, stream.Body); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Logf("stream ended with %v", err)
	}
}
