// Package cmd is rated's command tree (cobra's layout: the top-level main.go calls Execute).
// Each subcommand only wires flags and configuration to a package under pkg/.
package cmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/rated-dev/rated/internal/outdir"
)

// exitInterrupted is the exit status of a run stopped by SIGINT or SIGTERM (128 + SIGINT, as a
// shell reports a command stopped by Ctrl-C).
const exitInterrupted = 130

// interruptGrace is how long a command that writes an output set (--out) may take to stop by
// itself after the first SIGINT or SIGTERM: commands that watch cmd.Context() return, and their
// deferred Abort removes the unfinished set. One that is still running then (a loop that does
// not look at the context) has its unfinished set removed by Execute, which exits.
var interruptGrace = 10 * time.Second

// repeatedSignal is how soon after the first a signal counts as the same interrupt delivered
// twice (to the process and to its process group), not as a request to stop at once.
const repeatedSignal = 500 * time.Millisecond

// Execute runs the rated command line and exits non-zero with the error on failure.
//
// SIGINT and SIGTERM cancel the context every command gets from cmd.Context() (the one signal
// handler of rated: commands do not install their own), so a run stops and its deferred
// output-set Abort leaves --out as it was before the run: neither a new empty directory nor
// temporary files beside it. A second signal, or a command that has not stopped after
// interruptGrace, ends the process at once, after removing the unfinished output set.
func Execute() {
	os.Exit(execute(newRootCmd(), os.Args[1:], os.Stderr))
}

// execute runs root with args under the signal handling described at Execute and returns the
// exit status.
func execute(root *cobra.Command, args []string, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	guard := &outputGuard{}
	prev := root.PersistentPreRunE
	root.PersistentPreRunE = func(c *cobra.Command, a []string) error {
		guard.note(c)
		if prev != nil {
			return prev(c, a)
		}
		return nil
	}
	root.SetArgs(args)
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		// From here on a further signal ends the run at once.
		again := make(chan os.Signal, 1)
		signal.Notify(again, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(again)
		stop()
		var timeout <-chan time.Time
		if guard.active() {
			timeout = time.After(interruptGrace)
		}
		fmt.Fprintln(stderr, "rated: interrupted: stopping (interrupt again to stop at once)")
		first := time.Now()
	wait:
		for {
			select {
			case err = <-done:
				break wait
			case <-again:
				// timeout(1) and kill of a process group can deliver one signal twice.
				if time.Since(first) < repeatedSignal {
					continue
				}
				guard.remove(stderr)
				fmt.Fprintln(stderr, "rated: interrupted")
				return exitInterrupted
			case <-timeout:
				guard.remove(stderr)
				fmt.Fprintf(stderr, "rated: interrupted: the command did not stop within %v\n", interruptGrace)
				return exitInterrupted
			}
		}
	}
	switch {
	case err == nil:
		return 0
	case ctx.Err() != nil:
		fmt.Fprintln(stderr, "rated: interrupted:", err)
		return exitInterrupted
	}
	fmt.Fprintln(stderr, "rated:", err)
	return 1
}

// outputGuard remembers the output directory (--out) of the running command and whether it
// existed before the run, so that an interrupted command that does not stop by itself can have
// its unfinished output set removed as outdir's Abort would.
type outputGuard struct {
	mu      sync.Mutex
	dir     string
	existed bool
}

func (g *outputGuard) note(c *cobra.Command) {
	f := c.Flags().Lookup("out")
	if f == nil || f.Value.Type() != "string" || f.Value.String() == "" {
		return
	}
	dir, err := outdir.AbsReal(f.Value.String())
	if err != nil {
		return
	}
	_, err = os.Lstat(dir)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.dir, g.existed = dir, err == nil
}

func (g *outputGuard) active() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.dir != ""
}

// remove deletes what the unfinished set of this process left: its temporary directory beside
// --out and --out itself when the run created it and it is still empty. It touches nothing
// while another process holds the output's lock.
func (g *outputGuard) remove(stderr io.Writer) {
	g.mu.Lock()
	dir, existed := g.dir, g.existed
	g.mu.Unlock()
	if dir == "" {
		return
	}
	if err := outdir.RemoveUnfinished(dir, !existed); err != nil {
		fmt.Fprintln(stderr, "rated:", err)
	}
}
