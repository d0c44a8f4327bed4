// Package redistest starts throwaway Redis servers (the Debian package redis-server, installed
// by `rated setup redis`) for tests and benchmarks: bound to 127.0.0.1 on a free port, with the
// append-only file fsynced before every answer (appendonly yes, appendfsync always), in a
// temporary directory, and killed when the test ends. A missing redis-server skips the test with
// a hint, or fails it under RATED_REQUIRE_ASSETS=1.
package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/rated-dev/rated/internal/testassets"
)

// Server is one redis-server process; Kill, Stop and Start control it while its directory (and so
// its append-only file) stays.
type Server struct {
	Port int
	Dir  string
	bin  string
	t    testing.TB
	cmd  *exec.Cmd
	done chan struct{}
}

var prefixes atomic.Uint64

// Binary returns the path of redis-server, skipping (or failing) t when it is not installed.
func Binary(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if testassets.Required() {
			t.Fatalf("redis-server not found on PATH (RATED_REQUIRE_ASSETS=1): run `rated setup redis`")
		}
		t.Skip("redis-server not found on PATH: run `rated setup redis` to install it")
	}
	return bin
}

// Start starts a server for t and stops it when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{bin: Binary(t), Dir: t.TempDir(), t: t}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Kill)
	return s
}

// Addr is host:port.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.Port) }

// URL returns the state URL of a new, empty prefix on this server (each call a different one).
func (s *Server) URL() string {
	return fmt.Sprintf("redis://%s/0?prefix=t%d", s.Addr(), prefixes.Add(1))
}

// Start starts the process (again, after Kill or Stop) and waits until it answers PING.
func (s *Server) Start() error {
	s.cmd = exec.Command(s.bin, "--port", strconv.Itoa(s.Port), "--bind", "127.0.0.1", "--dir", s.Dir,
		"--appendonly", "yes", "--appendfsync", "always", "--save", "", "--daemonize", "no",
		"--protected-mode", "yes", "--logfile", filepath.Join(s.Dir, "redis.log"))
	if err := s.cmd.Start(); err != nil {
		return err
	}
	s.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { cmd.Wait(); close(done) }(s.cmd, s.done)
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := c.Ping(context.Background()).Err()
		if err == nil {
			return nil
		}
		select {
		case <-s.done:
			log, _ := os.ReadFile(filepath.Join(s.Dir, "redis.log"))
			return fmt.Errorf("redis-server on port %d exited at start: %s", s.Port, log)
		default:
		}
		if time.Now().After(deadline) {
			s.Kill()
			return fmt.Errorf("redis-server on port %d not answering after 15 s: %v", s.Port, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Kill ends the process with SIGKILL (a crash: only what the append-only file holds survives)
// and waits for it.
func (s *Server) Kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
}
