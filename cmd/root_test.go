package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/rated-dev/rated/internal/outdir"
)

// rated --version prints the build's module version, commit and Go version (debug.ReadBuildInfo).
func TestVersionFlag(t *testing.T) {
	stdout, _, err := runRated("--version")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stdout, "rated ") || !strings.Contains(stdout, "(commit ") || !strings.Contains(stdout, runtime.Version()+")") {
		t.Errorf("--version printed %q", stdout)
	}
}

// TestInterruptRemovesUnfinishedOutputSet sends SIGINT to a rated process (Execute's signal
// handling, in a child) once its output set is being written, for a command that watches its
// context (eval dynamic: the deferred Abort runs) and one that does not (the helper's own
// ignoresContext: Execute removes the set after interruptGrace). Either way the run exits 130 and leaves neither the
// --out it created nor temporary files beside it.
func TestInterruptRemovesUnfinishedOutputSet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	bench := dynamicBench(t)
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	seeds := make([]string, 5000)
	for i := range seeds {
		seeds[i] = fmt.Sprint(i + 1)
	}
	os.WriteFile(cfg, []byte("dynamic: {steps: 3000, summary_from: 1000, summary_to: 2500, as_window: 100, seeds: ["+strings.Join(seeds, ",")+"], split: test, curve_stride: 50}\n"+
		"scenarios:\n  - {name: s, failure_rate: 0.2, theta: 0.9, events: [{kind: persistent, start: 1000, select: {by: frequency, fraction: 0.2}}]}\n"), 0o644)
	for _, tc := range []struct {
		name, says string
		args       []string
		logged     bool // with a --decision-log, which must go with the set
	}{
		{"watches the context", "rated: interrupted: context canceled", []string{"eval", "dynamic", "--bench", bench, "--config", cfg, "--retriever", "bm25"}, false},
		{"with a decision log", "rated: interrupted: context canceled", []string{"eval", "dynamic", "--bench", bench, "--config", cfg, "--retriever", "bm25"}, true},
		{"ignores the context", "did not stop within 1s", []string{ignoresContext}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "D")
			dlog := filepath.Join(t.TempDir(), "decisions")
			args := append(tc.args, "--out", out)
			if tc.logged {
				args = append(args, "--decision-log", dlog)
			}
			child := ratedChild(args...)
			var stderr bytes.Buffer
			child.Stderr = &stderr
			child.Env = append(child.Env, "RATED_ASSETS="+t.TempDir())
			if err := child.Start(); err != nil {
				t.Fatal(err)
			}
			defer child.Process.Kill()
			// The set has begun once its temporary directory exists beside --out.
			deadline := time.Now().Add(60 * time.Second)
			for len(leftovers(t, out)) == 0 || (tc.logged && !hasFiles(dlog)) {
				if time.Now().After(deadline) {
					t.Fatalf("no output set (or decision log) begun after 60 s:\n%s", stderr.String())
				}
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(300 * time.Millisecond)
			child.Process.Signal(os.Interrupt)
			err := child.Wait()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != exitInterrupted {
				t.Fatalf("exit %v, want status %d:\n%s", err, exitInterrupted, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.says) {
				t.Errorf("stderr lacks %q:\n%s", tc.says, stderr.String())
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("--out %s exists after the interrupted run (%v)", out, err)
			}
			if l := leftovers(t, out); len(l) > 0 {
				t.Errorf("temporary files left: %v", l)
			}
			if _, err := os.Stat(dlog); tc.logged && !os.IsNotExist(err) {
				t.Errorf("--decision-log %s exists after the interrupted run (%v): the same command could not run again", dlog, err)
			}
		})
	}
}

// hasFiles reports whether dir holds any entry.
func hasFiles(dir string) bool {
	es, _ := os.ReadDir(dir)
	return len(es) > 0
}

// ignoresContext names a command of the helper process's tree (not of rated's) that begins an
// output set and then never looks at its context, as a loop that forgets to would: every command
// of rated stops by itself, so Execute's grace path needs one.
const ignoresContext = "test-ignores-context"

// TestRatedExecuteHelper runs Execute's code on RATED_EXECUTE_ARGS (fields separated by \x1f)
// and exits with its status; it is the child process of the interrupt and kill tests.
func TestRatedExecuteHelper(t *testing.T) {
	args := os.Getenv("RATED_EXECUTE_ARGS")
	if args == "" {
		t.Skip("helper process for the interrupt and kill tests")
	}
	interruptGrace = time.Second
	root := newRootCmd()
	stuck := &cobra.Command{Use: ignoresContext, RunE: func(c *cobra.Command, _ []string) error {
		out, _ := c.Flags().GetString("out")
		set, err := outdir.Begin(out, outdir.Options{})
		if err != nil {
			return err
		}
		defer set.Abort()
		select {} // never returns, whatever the context says
	}}
	stuck.Flags().String("out", "", "output set")
	root.AddCommand(stuck)
	os.Exit(execute(root, strings.Split(args, "\x1f"), os.Stderr))
}

// ratedChild is the command that runs rated's command line args in the helper process.
func ratedChild(args ...string) *exec.Cmd {
	c := exec.Command(os.Args[0], "-test.run=^TestRatedExecuteHelper$", "-test.count=1")
	c.Env = append(os.Environ(), "RATED_EXECUTE_ARGS="+strings.Join(args, "\x1f"))
	return c
}

// A stray word is an error: positional arguments to a command that takes none (once ignored, so
// that `eval dynamic configs/x.yaml` ran the paper's config) and an unknown subcommand of a
// group (once help and status 0), with the near names suggested.
func TestStrayArgumentsAreRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"eval", "dynamc"}, `unknown command "dynamc" for "rated eval"; did you mean dynamic?`},
		{[]string{"model", "lst"}, `unknown command "lst" for "rated model"; did you mean list?`},
		{[]string{"eval", "dynamic", "configs/extended.yaml"}, `unknown command "configs/extended.yaml" for "rated eval dynamic"`},
		{[]string{"reproduce", "2"}, `unknown command "2" for "rated reproduce"`},
	} {
		if _, _, err := runRated(c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	if _, _, err := runRated("eval"); err != nil {
		t.Errorf("a group alone shows its help: %v", err)
	}
}
