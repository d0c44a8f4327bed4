package cmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rated-dev/rated/internal/testassets"
	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/decisionlog"
	"github.com/rated-dev/rated/pkg/defaultbench"
	"github.com/rated-dev/rated/pkg/router"
	"github.com/rated-dev/rated/pkg/state"
)

var ratedBinary struct {
	once sync.Once
	path string
	err  error
}

// binary builds the rated command once per test run (process-level tests: kill -9, signals,
// MCP over stdio).
func binary(t *testing.T) string {
	t.Helper()
	ratedBinary.once.Do(func() {
		dir, err := os.MkdirTemp("", "rated-bin-")
		if err != nil {
			ratedBinary.err = err
			return
		}
		ratedBinary.path = filepath.Join(dir, "rated")
		out, err := exec.Command("go", "build", "-o", ratedBinary.path, testassets.Root(t)).CombinedOutput()
		if err != nil {
			ratedBinary.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if ratedBinary.err != nil {
		t.Fatal(ratedBinary.err)
	}
	return ratedBinary.path
}

// catalogFile writes the embedded default benchmark's catalog (316 tools) as JSONL.
func catalogFile(t *testing.T) (string, []string) {
	t.Helper()
	b, err := defaultbench.Load()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "catalog.jsonl")
	if err := catalog.WriteJSONL(path, b.Tools); err != nil {
		t.Fatal(err)
	}
	var queries []string
	for _, q := range b.SplitQueries("test") {
		queries = append(queries, q.Text)
	}
	return path, queries
}

// server is a running `rated serve`.
type server struct {
	cmd    *exec.Cmd
	base   string
	stderr *bytes.Buffer
	mu     *sync.Mutex
	done   chan error
}

// startServer runs rated serve on 127.0.0.1 with a free port and waits until it listens.
func startServer(t *testing.T, args ...string) *server {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, stderr: &bytes.Buffer{}, mu: &sync.Mutex{}, done: make(chan error, 1)}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.stderr.WriteString(line + "\n")
			s.mu.Unlock()
			if a, ok := strings.CutPrefix(line, "rated serve: listening on "); ok {
				addr <- a
			}
		}
		s.done <- cmd.Wait()
	}()
	select {
	case s.base = <-addr:
	case err := <-s.done:
		t.Fatalf("rated serve exited: %v\n%s", err, s.log())
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("rated serve did not listen within 60 s\n%s", s.log())
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-s.done
		}
	})
	return s
}

func (s *server) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

func post(base, path string, body any, out any) (int, error) {
	raw, _ := json.Marshal(body)
	resp, err := http.Post(base+path, "application/json", bytes.NewReader(raw))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode == 200 {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, err
		}
	}
	return resp.StatusCode, nil
}

type ack struct {
	decision, tool string
	executed       bool
}

type selection struct {
	DecisionID string `json:"decision_id"`
	Tools      []struct {
		ID string `json:"id"`
	} `json:"tools"`
}

// load sends select + feedback pairs from workers until stop, and returns the acknowledged
// reports.
func load(base string, queries []string, workers int, stop <-chan struct{}) []ack {
	var mu sync.Mutex
	var acks []ack
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; ; i += workers {
				select {
				case <-stop:
					return
				default:
				}
				var sel selection
				if code, err := post(base, "/v1/select", map[string]any{"query": queries[i%len(queries)]}, &sel); err != nil || code != 200 || len(sel.Tools) == 0 {
					continue
				}
				a := ack{sel.DecisionID, sel.Tools[0].ID, i%3 != 0}
				code, err := post(base, "/v1/feedback", map[string]any{"decision_id": a.decision, "tool": a.tool, "executed": a.executed}, nil)
				if err == nil && code == 200 {
					mu.Lock()
					acks = append(acks, a)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return acks
}

// TestServeKill9UnderLoad kills rated serve with SIGKILL while it takes feedback from eight
// clients, twice, and checks after each kill that every acknowledged report is in the state on
// disk; the restarted server loads it and serves, and the decision log reads cleanly.
func TestServeKill9UnderLoad(t *testing.T) {
	cat, queries := catalogFile(t)
	dir := t.TempDir()
	stateDir, logDir := filepath.Join(dir, "state"), filepath.Join(dir, "log")
	args := []string{"--retriever", "bm25", "--state", stateDir, "--decision-log", logDir, "--snapshot-every", "1000000000"}
	total := 0
	for round := range 2 {
		extra := []string{}
		if round == 0 {
			extra = []string{"--catalog", cat}
		}
		s := startServer(t, append(args, extra...)...)
		stop := make(chan struct{})
		result := make(chan []ack)
		go func() { result <- load(s.base, queries, 8, stop) }()
		time.Sleep(1500 * time.Millisecond)
		if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-s.done
		close(stop)
		acks := <-result
		if len(acks) < 20 {
			t.Fatalf("round %d: only %d reports acknowledged before the kill\n%s", round, len(acks), s.log())
		}
		store, err := state.OpenBolt(stateDir, state.BoltOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Check(); err != nil {
			t.Fatalf("round %d: state after kill -9: %v", round, err)
		}
		logged := map[ack]bool{}
		err = router.LoggedReports(context.Background(), store, func(r router.LoggedReport) error {
			logged[ack{r.DecisionID, r.Tool, r.Outcome.Executed}] = true
			return nil
		})
		store.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range acks {
			if !logged[a] {
				t.Fatalf("round %d: acknowledged report %+v is not in the state after kill -9", round, a)
			}
		}
		total += len(acks)
		t.Logf("round %d: %d acknowledged reports, all in the state (%d recorded in all)", round, len(acks), len(logged))
	}
	// The state loads and serves; SIGTERM stops it cleanly.
	s := startServer(t, args...)
	var health map[string]any
	resp, err := http.Get(s.base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&health)
	resp.Body.Close()
	if health["status"] != "ok" || health["tools"].(float64) != 316 || health["boot"].(float64) != 3 {
		t.Fatalf("after two kills: %v", health)
	}
	acks := load(s.base, queries[:20], 1, closedAfter(300*time.Millisecond))
	if len(acks) == 0 {
		t.Fatal("the restarted server takes no feedback")
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	if err := <-s.done; err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, s.log())
	}
	if !strings.Contains(s.log(), "stopped; state saved") {
		t.Fatalf("no clean stop:\n%s", s.log())
	}
	files, _ := decisionlog.Files(logDir, "decisions")
	if _, err := decisionlog.ReadFiles(files, func(decisionlog.Record) error { return nil }); err != nil {
		t.Fatalf("decision log after kills: %v", err)
	}
	t.Logf("%d acknowledged reports over two kills", total)
}

func closedAfter(d time.Duration) <-chan struct{} {
	c := make(chan struct{})
	time.AfterFunc(d, func() { close(c) })
	return c
}

// TestServeMCPStdio drives `rated serve --mcp stdio` with the SDK's client over the process's
// stdin and stdout.
func TestServeMCPStdio(t *testing.T) {
	cat, _ := catalogFile(t)
	cmd := exec.Command(binary(t), "serve", "--mcp", "stdio", "--retriever", "bm25", "--ephemeral", "--catalog", cat)
	c := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "find_tools", Arguments: map[string]any{"query": "create a github pull request", "k": 3}})
	if err != nil || res.IsError {
		t.Fatalf("find_tools: %v %+v", err, res)
	}
	var sel selection
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &sel); err != nil || len(sel.Tools) != 3 || !strings.Contains(sel.Tools[0].ID, "pull_request") {
		t.Fatalf("find_tools answered %s", raw)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "report_outcome", Arguments: map[string]any{
		"decision_id": sel.DecisionID, "tool": sel.Tools[0].ID, "executed": true, "task_success": true}})
	if err != nil || res.IsError {
		t.Fatalf("report_outcome: %v %+v", err, res)
	}
}

// SIGTERM stops `rated serve --mcp stdio` as it stops the HTTP server: exit 0, the state saved
// (a restart on it finds the selection made before the signal), stdin still open.
func TestServeMCPStdioStopsOnSIGTERM(t *testing.T) {
	cat, _ := catalogFile(t)
	stateDir := t.TempDir()
	run := func(signal bool) (string, error) {
		cmd := exec.Command(binary(t), "serve", "--mcp", "stdio", "--retriever", "bm25", "--state", stateDir, "--catalog", cat)
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		defer stdin.Close()
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Process.Kill()
		// One JSON-RPC exchange proves the server reads stdin; a tools/call selects once.
		answers := bufio.NewScanner(stdout)
		for i, req := range []string{
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"find_tools","arguments":{"query":"create a github pull request","k":3}}}`,
		} {
			if _, err := io.WriteString(stdin, req+"\n"); err != nil {
				t.Fatal(err)
			}
			if i == 1 {
				continue // a notification has no answer
			}
			if !answers.Scan() {
				t.Fatalf("no answer to %s\n%s", req, stderr.String())
			}
		}
		if !signal {
			stdin.Close()
		} else if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			return stderr.String(), err
		case <-time.After(60 * time.Second):
			t.Fatalf("rated serve --mcp stdio did not stop within 60 s\n%s", stderr.String())
		}
		return "", nil
	}
	log, err := run(true)
	if err != nil || !strings.Contains(log, "rated serve: stopped; state saved") {
		t.Fatalf("SIGTERM: exit %v\n%s", err, log)
	}
	log, err = run(false)
	if err != nil || !strings.Contains(log, "step 1,") {
		t.Fatalf("restart on the saved state: exit %v (want step 1: the selection before SIGTERM)\n%s", err, log)
	}
}

// Every numeric flag of rated serve is checked before any work (here: before the missing
// catalog is read), and the error names the flag and its value.
func TestServeRejectsBadNumericFlags(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-catalog.jsonl")
	for _, tc := range []struct {
		flag, value, want string
	}{
		{"k", "0", "--k = 0: must be between 1 and 100"},
		{"k", "101", "--k = 101: must be between 1 and 100"},
		{"k", "-2", "--k = -2: must be between 1 and 100"},
		{"context-dim", "0", "--context-dim = 0: must be at least 1"},
		{"max-body", "-1", "--max-body = -1: must be at least 1"},
		{"max-body", "0", "--max-body = 0: must be at least 1"},
		{"rate-limit", "-1", "--rate-limit = -1: must be"},
		{"rate-limit", "NaN", "--rate-limit = NaN: must be"},
		{"rate-limit", "+Inf", "--rate-limit = +Inf: must be"},
		{"rate-burst", "-3", "--rate-burst = -3: must be at least 0"},
		{"snapshot-every", "-1", "--snapshot-every = -1: must be at least 1"},
		{"snapshot-every", "0", "--snapshot-every = 0: must be at least 1"},
		{"query-cache", "-1", "--query-cache = -1: must be at least 0"},
		{"decision-log-mb", "0", "--decision-log-mb = 0: must be between 1 and 1073741824"},
		// 2^44 MiB shifted to bytes wraps to 0, which used to mean the 64 MiB default.
		{"decision-log-mb", "17592186044416", "--decision-log-mb = 17592186044416: must be between 1 and 1073741824"},
		{"decision-log-files", "-1", "--decision-log-files = -1: must be at least 0"},
		{"step", "-1s", "--step = -1s: must be at least 0"},
		{"shutdown-grace", "-1s", "--shutdown-grace = -1s: must be at least 0"},
		{"follow-every", "0s", "--follow-every = 0s: must be positive"},
		// Valid values: the flags pass, and the missing catalog is the error.
		{"query-cache", "0", missing},
		{"step", "0s", missing},
		{"rate-limit", "0", missing},
		{"k", "100", missing},
	} {
		t.Run(tc.flag+"="+tc.value, func(t *testing.T) {
			cmd := newRootCmd()
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			cmd.SetArgs([]string{"serve", "--ephemeral", "--retriever", "bm25", "--addr", "127.0.0.1:0",
				"--catalog", missing, "--" + tc.flag, tc.value})
			err := cmd.Execute()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("--%s %s: error %v, want one containing %q", tc.flag, tc.value, err, tc.want)
			}
		})
	}
}

// A request still running when --shutdown-grace ends is cut off, but the state is saved and
// the exit is clean (status 0), with a warning.
func TestServeSIGTERMPastTheGraceStillExitsCleanly(t *testing.T) {
	cat, _ := catalogFile(t)
	s := startServer(t, "--retriever", "bm25", "--state", filepath.Join(t.TempDir(), "state"), "--catalog", cat,
		"--shutdown-grace", "200ms")
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A request whose body never completes: its handler runs (it asked for the body: 100
	// Continue) and waits for the rest.
	fmt.Fprintf(conn, "POST /v1/select HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n")
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.Contains(line, "100 Continue") {
		t.Fatalf("no 100 Continue: %q %v", line, err)
	}
	fmt.Fprintf(conn, `{"query": "send an`)
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-s.done; err != nil {
		t.Fatalf("exit after SIGTERM with a request past the grace: %v\n%s", err, s.log())
	}
	if log := s.log(); !strings.Contains(log, "stopped; state saved") || !strings.Contains(log, "warning: --shutdown-grace 200ms") {
		t.Fatalf("want a warning and a clean stop:\n%s", log)
	}
}

// A catalog tool the router refuses is reported with the catalog's file and line (blank lines
// counted), before any work of the start.
func TestServeCatalogErrorsNameFileAndLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.jsonl")
	lines := `{"id": "a", "name": "a", "description": "first", "platform": "mcp"}

{"id": "b", "name": "b", "description": "second", "platform": "mcp"}
{"id": "c", "name": "c", "description": "rings \u0007 a bell", "platform": "mcp"}
`
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := newRootCmd()
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SetArgs([]string{"serve", "--ephemeral", "--retriever", "bm25", "--addr", "127.0.0.1:0", "--catalog", path})
	err := cmd.Execute()
	want := path + ":4: description: contains the control character U+0007"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
}

// A Redis state without --step is refused before the encoder is opened or Redis is dialled (the
// port below has no server: the flag check must come first).
func TestServeRedisNeedsStepBeforeWork(t *testing.T) {
	cmd := newRootCmd()
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SetArgs([]string{"serve", "--state", "redis://127.0.0.1:1/0", "--retriever", "bm25", "--addr", "127.0.0.1:0"})
	err := cmd.Execute()
	if err == nil || !strings.Contains(err.Error(), "--state redis://127.0.0.1:1/0 needs --step") {
		t.Fatalf("error %v", err)
	}
}
