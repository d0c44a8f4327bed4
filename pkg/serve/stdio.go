package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// JSON-RPC 2.0's error codes for a line that is not JSON and for JSON that is not a message.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeInvalidParams  = -32602
)

// lineTransport speaks newline-delimited JSON-RPC on in and out like the SDK's StdioTransport,
// but a line that is not a JSON-RPC message is answered with a JSON-RPC error (parse error or
// invalid request, as the specification asks) and skipped: the SDK's own transport ends the
// session at the first such line, which takes an agent's tools away for one stray byte.
type lineTransport struct {
	in      io.Reader
	out     io.Writer
	log     io.Writer // each refused line is noted here, with its number
	maxLine int       // the longest line kept, in bytes; longer ones are refused whole
	// version is the protocol version the client's initialize asked for ("" before it): the
	// SDK ends the session at a batch under 2025-06-18 and later, so those are refused here.
	version string
}

// inFlightDrain is how long the end of standard input waits for the answers of the requests
// before it: a script that pipes its requests in and closes its end gets them all answered (the
// SDK's session ends with its input, dropping what is still running).
const inFlightDrain = 30 * time.Second

// firstWithoutBatches is the first MCP protocol version without JSON-RPC batches.
const firstWithoutBatches = "2025-06-18"

// Connect starts the line filter and returns the SDK's connection over the lines it passes.
func (t *lineTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	pr, pw := io.Pipe()
	out := &lockedWriter{w: t.out, pending: map[string]bool{}, answered: make(chan struct{}, 1)}
	go func() {
		err := t.filter(pw, out)
		if err == nil {
			out.wait(ctx, inFlightDrain)
		}
		pw.CloseWithError(err)
	}()
	return (&mcp.IOTransport{Reader: pr, Writer: out, MaxLineLength: -1}).Connect(ctx)
}

// filter copies each line of t.in that decodes as a JSON-RPC message (or a batch of them) to
// pass, and answers every other non-blank line on out. It returns when t.in ends (nil, so the
// session sees end of input) or when pass is closed.
func (t *lineTransport) filter(pass io.Writer, out *lockedWriter) error {
	br := bufio.NewReaderSize(t.in, 64<<10)
	for n := 1; ; n++ {
		line, tooLong, err := readLine(br, t.maxLine)
		if len(line) > 0 || tooLong {
			batches := t.version != "" && t.version < firstWithoutBatches
			if code, msg, id := checkLine(line, tooLong, t.maxLine, batches); code != 0 {
				fmt.Fprintf(t.log, "rated serve: stdin line %d refused: %s\n", n, msg)
				if _, werr := out.Write(errorResponse(id, code, fmt.Sprintf("line %d: %s", n, msg))); werr != nil {
					return werr
				}
			} else {
				if v, ok := initializeVersion(line); ok {
					t.version = v
				}
				out.expect(requestIDs(line))
				if _, werr := pass.Write(append(line, '\n')); werr != nil {
					return werr
				}
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readLine reads one line without its line ending and surrounding blanks. A line longer than
// maxLine bytes is read to its end but not kept (tooLong).
func readLine(br *bufio.Reader, maxLine int) (line []byte, tooLong bool, err error) {
	for {
		chunk, rerr := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > maxLine+2 { // +2: the line ending is not counted
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if rerr == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimSpace(line), tooLong, rerr
	}
}

// checkLine returns 0 for a line the SDK can take: one JSON-RPC message, or, where batches is
// set (protocol versions before 2025-06-18), a non-empty array of them. Otherwise the JSON-RPC
// error code, a message naming what is wrong, and the request's id where the line has a usable
// one (null otherwise).
func checkLine(line []byte, tooLong bool, maxLine int, batches bool) (code int, msg string, id json.RawMessage) {
	if tooLong {
		return codeInvalidRequest, fmt.Sprintf("longer than %d bytes", maxLine), nil
	}
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v)
		return codeParseError, "parse error: " + err.Error(), nil
	}
	if line[0] == '[' {
		var batch []json.RawMessage
		if err := json.Unmarshal(line, &batch); err != nil || len(batch) == 0 {
			return codeInvalidRequest, "invalid request: an empty batch", nil
		}
		for i, raw := range batch {
			if _, err := jsonrpc.DecodeMessage(raw); err != nil {
				return codeInvalidRequest, fmt.Sprintf("invalid request: batch element %d: %v", i, err), nil
			}
			if msg, bad := badInitializeParams(raw); bad {
				return codeInvalidParams, fmt.Sprintf("batch element %d: %s", i, msg), nil
			}
		}
		if !batches {
			return codeInvalidRequest, "invalid request: JSON-RPC batches are not supported from protocol version " + firstWithoutBatches + " on (send the messages one per line)", nil
		}
		return 0, "", nil
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		return codeInvalidRequest, "invalid request: " + err.Error(), requestID(line)
	}
	if msg, bad := badInitializeParams(line); bad {
		return codeInvalidParams, msg, requestID(line)
	}
	return 0, "", nil
}

// badInitializeParams reports an initialize request whose params are there but not an object
// (nor null), with the message of its refusal: the SDK answers it with error code 0, which is
// no JSON-RPC code, where every other method's params that do not decode get -32602.
func badInitializeParams(msg []byte) (string, bool) {
	var m struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method != "initialize" || len(m.Params) == 0 {
		return "", false
	}
	p := bytes.TrimSpace(m.Params)
	if p[0] == '{' || string(p) == "null" {
		return "", false
	}
	return "invalid params: initialize's params must be an object, not " + string(p[:min(len(p), 40)]), true
}

// initializeVersion returns the protocolVersion of an initialize request.
func initializeVersion(line []byte) (string, bool) {
	var m struct {
		Method string `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &m) != nil || m.Method != "initialize" {
		return "", false
	}
	return m.Params.ProtocolVersion, true
}

// requestID is the line's "id" when it is a string or a number, as a response may echo it.
func requestID(line []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(m.ID, &v) != nil {
		return nil
	}
	switch v.(type) {
	case string, float64:
		return m.ID
	}
	return nil
}

// errorResponse is one newline-terminated JSON-RPC error response.
func errorResponse(id json.RawMessage, code int, message string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	type rpcError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{"2.0", id, rpcError{code, message}})
	return append(b, '\n')
}

// lockedWriter serialises whole writes: the SDK writes each message with one Write, and the
// filter's error responses must not land inside one. It also keeps the ids of the requests
// passed on that are not answered yet, for the wait at the end of input. Close is a no-op
// (standard output stays open for the process).
type lockedWriter struct {
	mu       sync.Mutex
	w        io.Writer
	pending  map[string]bool
	answered chan struct{} // signalled after a write that answered a pending request
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.w.Write(p)
	if len(l.pending) > 0 {
		for _, id := range responseIDs(p) {
			delete(l.pending, id)
		}
		select {
		case l.answered <- struct{}{}:
		default:
		}
	}
	return n, err
}

// expect records requests passed on to the server.
func (l *lockedWriter) expect(ids []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range ids {
		l.pending[id] = true
	}
}

// wait returns once every expected request is answered, ctx ends or limit passes.
func (l *lockedWriter) wait(ctx context.Context, limit time.Duration) {
	deadline := time.After(limit)
	for {
		l.mu.Lock()
		left := len(l.pending)
		l.mu.Unlock()
		if left == 0 {
			return
		}
		select {
		case <-l.answered:
		case <-ctx.Done():
			return
		case <-deadline:
			return
		}
	}
}

// rpcIDs returns the ids of the JSON-RPC messages of a line (one message or a batch) for which
// keep says yes (given whether the message has a method), as their JSON text.
func rpcIDs(line []byte, keep func(method bool) bool) []string {
	type head struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
	}
	var msgs []head
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if json.Unmarshal(trimmed, &msgs) != nil {
			return nil
		}
	} else {
		var m head
		if json.Unmarshal(trimmed, &m) != nil {
			return nil
		}
		msgs = []head{m}
	}
	var ids []string
	for _, m := range msgs {
		if len(m.ID) > 0 && string(m.ID) != "null" && keep(m.Method != nil) {
			ids = append(ids, string(bytes.TrimSpace(m.ID)))
		}
	}
	return ids
}

// requestIDs are the ids of a line's requests (messages with a method and an id).
func requestIDs(line []byte) []string { return rpcIDs(line, func(method bool) bool { return method }) }

// responseIDs are the ids of a written line's responses (messages with an id and no method).
func responseIDs(line []byte) []string {
	return rpcIDs(line, func(method bool) bool { return !method })
}

func (l *lockedWriter) Close() error { return nil }
