package synth

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// NewProgress reports progress to w: a progress bar with throughput and ETA when w is a terminal
// (tty true), and otherwise a plain line at each 10% step with the same figures, so CI logs stay
// short. now is the clock used for throughput and ETA.
func NewProgress(w io.Writer, tty bool, now func() time.Time) Progress {
	if tty {
		return &barProgress{w: w}
	}
	return &lineProgress{w: w, now: now}
}

type barProgress struct {
	w   io.Writer
	bar *progressbar.ProgressBar
}

func (p *barProgress) Start(stage string, total, done int) {
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

func (p *barProgress) Add(n int) { _ = p.bar.Add(n) }

func (p *barProgress) Finish() { _ = p.bar.Finish() }

type lineProgress struct {
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

func (p *lineProgress) Start(stage string, total, done int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stage, p.total, p.start, p.done, p.t0 = stage, total, done, done, p.now()
	p.next = done + max(1, total/10)
	fmt.Fprintf(p.w, "%s: %d items, %d already done (resumed)\n", stage, total, done)
}

func (p *lineProgress) Add(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += n
	if p.done >= p.next || p.done == p.total {
		p.next = p.done + max(1, p.total/10)
		fmt.Fprintln(p.w, p.line())
	}
}

func (p *lineProgress) line() string {
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

func (p *lineProgress) Finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "%s: done in %s\n", p.stage, p.now().Sub(p.t0).Round(time.Second))
}
