// Package progress is rated's one progress reporter for long-running commands: a progress bar
// with throughput and ETA when the output is a terminal, and otherwise plain lines (the start,
// each 10% step with the same figures, the end), so CI logs stay short. Packages that report
// progress declare the small interface they need (Start, Add, Finish); Reporter satisfies it.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Reporter reports the advance of one stage at a time.
type Reporter interface {
	// Start announces a stage with total items, of which done are already finished (resumed:
	// they do not count towards the throughput).
	Start(stage string, total, done int)
	// Add reports n more finished items.
	Add(n int)
	// Finish ends the stage.
	Finish()
}

// New returns a Reporter writing to w: a bar when tty is true, plain lines otherwise. now is the
// clock of the throughput and the ETA.
func New(w io.Writer, tty bool, now func() time.Time) Reporter {
	if tty {
		return &bar{w: w}
	}
	return &lines{w: w, now: now}
}

// ForWriter is New with tty true when w is a terminal.
func ForWriter(w io.Writer, now func() time.Time) Reporter {
	f, ok := w.(*os.File)
	return New(w, ok && term.IsTerminal(int(f.Fd())), now)
}

// Nop reports nothing.
type Nop struct{}

// Start implements Reporter.
func (Nop) Start(string, int, int) {}

// Add implements Reporter.
func (Nop) Add(int) {}

// Finish implements Reporter.
func (Nop) Finish() {}

// Func adapts r to a callback told the absolute count, func(done, total), as encoders and
// evaluations report it. One callback may report several jobs in turn (eval offline encodes one
// catalog per retriever): a call with another total, or a count that goes back, starts a new
// stage, and a stage ends when done reaches total.
func Func(r Reporter, stage string) func(done, total int) {
	var mu sync.Mutex
	started, finished := false, false
	last, lastTotal := 0, -1
	return func(done, total int) {
		mu.Lock()
		defer mu.Unlock()
		if !started || total != lastTotal || done < last {
			if started && !finished {
				r.Finish()
			}
			r.Start(stage, total, 0)
			started, finished, last, lastTotal = true, false, 0, total
		}
		if finished {
			return
		}
		if done > last {
			r.Add(done - last)
			last = done
		}
		if done >= total {
			r.Finish()
			finished = true
		}
	}
}

type bar struct {
	w   io.Writer
	bar *progressbar.ProgressBar
}

func (p *bar) Start(stage string, total, done int) {
	p.bar = progressbar.NewOptions(total,
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription(stage),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("items"),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionFullWidth(),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(p.w) }),
	)
	if done > 0 {
		_ = p.bar.Set(done)
		p.bar.Reset() // throughput counts only this run's items
		_ = p.bar.Set(done)
	}
}

func (p *bar) Add(n int) {
	if p.bar != nil {
		_ = p.bar.Add(n)
	}
}

func (p *bar) Finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}

type lines struct {
	w     io.Writer
	now   func() time.Time
	mu    sync.Mutex
	stage string
	total int
	start int
	done  int
	next  int
	t0    time.Time
}

func (p *lines) Start(stage string, total, done int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stage, p.total, p.start, p.done, p.t0 = stage, total, done, done, p.now()
	p.next = done + max(1, total/10)
	if done > 0 {
		fmt.Fprintf(p.w, "%s: %d items, %d already done (resumed)\n", stage, total, done)
		return
	}
	fmt.Fprintf(p.w, "%s: %d items\n", stage, total)
}

func (p *lines) Add(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += n
	if p.done >= p.next || p.done == p.total {
		p.next = p.done + max(1, p.total/10)
		fmt.Fprintln(p.w, p.line())
	}
}

func (p *lines) line() string {
	el := p.now().Sub(p.t0)
	ran := p.done - p.start
	// Under a second (items served from a cache) a rate says nothing and reads absurdly.
	rate := "-"
	if el >= time.Second {
		rate = fmt.Sprintf("%.1f", float64(ran)/el.Minutes())
	}
	eta := "?"
	if ran > 0 {
		eta = (time.Duration(float64(el) / float64(ran) * float64(p.total-p.done))).Round(time.Second).String()
	}
	return fmt.Sprintf("%s: %d/%d (%.0f%%), %s items/min, ETA %s", p.stage, p.done, p.total, 100*float64(p.done)/float64(max(p.total, 1)), rate, eta)
}

func (p *lines) Finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "%s: done in %s\n", p.stage, p.now().Sub(p.t0).Round(time.Second))
}
