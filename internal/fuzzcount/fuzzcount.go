// Package fuzzcount counts the executions of a fuzz target for scripts/fuzz.sh. The "execs"
// figure that go test prints lags badly when each execution does file I/O (workers report in
// batches: a worker that ran 30,652 inputs of FuzzParseSources in 20 s was shown as 3), so the
// figures of docs/INPUTS.md come from here. It does nothing unless RATED_FUZZ_COUNT names a
// directory; then every process running the target writes its count to DIR/<target>-<pid>.
package fuzzcount

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// counter is one target's count in this process, flushed to its file once a second.
type counter struct {
	n    atomic.Int64
	once sync.Once
}

var (
	mu       sync.Mutex
	counters = map[string]*counter{}
)

// Tick counts one execution of target.
func Tick(target string) {
	dir := os.Getenv("RATED_FUZZ_COUNT")
	if dir == "" {
		return
	}
	mu.Lock()
	c := counters[target]
	if c == nil {
		c = &counter{}
		counters[target] = c
	}
	mu.Unlock()
	c.n.Add(1)
	c.once.Do(func() {
		path := filepath.Join(dir, fmt.Sprintf("%s-%d", target, os.Getpid()))
		go func() {
			for {
				os.WriteFile(path, []byte(fmt.Sprint(c.n.Load())), 0o644)
				time.Sleep(time.Second)
			}
		}()
	})
}
