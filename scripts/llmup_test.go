package scripts

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeOllama stands in for the Ollama binary: `serve` answers the endpoints llm-up calls on
// $OLLAMA_HOST, failing the first chat completion with a 500 as Ollama 0.6.5 does when its runner
// panics while loading on a busy machine; `create` succeeds. Every chat completion is counted in
// $FAKE_COUNT.
const fakeOllama = `#!/usr/bin/env python3
import http.server, json, os, sys
if sys.argv[1] == "create":
    sys.exit(0)
host, port = os.environ["OLLAMA_HOST"].rsplit(":", 1)
model, digest, count = os.environ["FAKE_MODEL"], os.environ["FAKE_DIGEST"], os.environ["FAKE_COUNT"]
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def reply(self, code, body):
        b = json.dumps(body).encode()
        self.send_response(code); self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(b))); self.end_headers(); self.wfile.write(b)
    def do_GET(self):
        if self.path == "/api/version": return self.reply(200, {"version": "0.6.5"})
        if self.path == "/api/tags": return self.reply(200, {"models": [{"name": model + ":latest"}]})
        self.reply(404, {})
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path == "/api/show": return self.reply(200, {"modelfile": "FROM /blobs/sha256-" + digest})
        if self.path == "/v1/chat/completions":
            n = int(open(count).read() or 0) + 1 if os.path.exists(count) else 1
            open(count, "w").write(str(n))
            if n == 1: return self.reply(500, {"error": "llama runner process has terminated: context canceled"})
            return self.reply(200, {"choices": [{"message": {"role": "assistant", "content": "Paris"}}]})
        self.reply(404, {})
http.server.ThreadingHTTPServer((host, int(port)), H).serve_forever()
`

// TestLLMUpRetriesFirstChatCompletion runs scripts/llm-up against a fake Ollama whose first chat
// completion fails with a 500: llm-up must retry and report ready, having asked twice.
func TestLLMUpRetriesFirstChatCompletion(t *testing.T) {
	for _, tool := range []string{"python3", "curl", "bash", "setsid"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	home := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	digest := strings.Repeat("ab", 32)
	bin := filepath.Join(home, "llm", "bin", "ollama")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Dir(bin), 0o755))
	must(os.WriteFile(bin, []byte(fakeOllama), 0o755))
	must(os.MkdirAll(filepath.Join(home, "llm", "models"), 0o755))
	must(os.WriteFile(filepath.Join(home, "llm", "models", "fake.gguf"), []byte("GGUF"), 0o644))
	cfg := filepath.Join(home, "llm.yaml")
	must(os.WriteFile(cfg, []byte(fmt.Sprintf(`host: 127.0.0.1
port: %d
model: fake
gguf: llm/models/fake.gguf
gguf_sha256: %s
chat_template: chatml
num_thread: 1
num_parallel: 1
context_length: 512
ready_timeout_s: 30
`, port, digest)), 0o644))
	count := filepath.Join(home, "count")
	env := append(os.Environ(), "RATED_HOME="+home, "RATED_LLM_CONFIG="+cfg,
		"FAKE_MODEL=fake", "FAKE_DIGEST="+digest, "FAKE_COUNT="+count)
	t.Cleanup(func() {
		down := exec.Command("bash", "llm-down")
		down.Env = env
		if out, err := down.CombinedOutput(); err != nil {
			t.Logf("llm-down: %v\n%s", err, out)
		}
	})
	up := exec.Command("bash", "llm-up")
	up.Env = env
	out, err := up.CombinedOutput()
	if err != nil {
		t.Fatalf("llm-up: %v\n%s", err, out)
	}
	for _, want := range []string{"chat completion attempt 1 failed; retrying", "llm-up: ready: http://127.0.0.1:"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("llm-up output lacks %q:\n%s", want, out)
		}
	}
	if n, _ := os.ReadFile(count); string(n) != "2" {
		t.Fatalf("%s chat completions asked, want 2 (one failed, one answered)", n)
	}
}
