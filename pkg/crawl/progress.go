package crawl

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Progress starts progress reports for units of work (a platform, a probe batch).
type Progress interface {
	Start(label string, total int) Bar
}

// Bar is one progress report.
type Bar interface {
	Add(n int)
	Done()
}

// NopProgress reports nothing.
type NopProgress struct{}

// Start implements Progress.
func (NopProgress) Start(string, int) Bar { return nopBar{} }

type nopBar struct{}

// Add implements Bar.
func (nopBar) Add(int) {}

// Done implements Bar.
func (nopBar) Done() {}

// NewProgress returns progress bars on w when it is a terminal, and plain start/end lines
// otherwise (CI logs).
func NewProgress(w io.Writer) Progress {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return ttyProgress{w: w}
	}
	return lineProgress{w: w}
}

type ttyProgress struct{ w io.Writer }

// Start implements Progress with a progress bar.
func (p ttyProgress) Start(label string, total int) Bar {
	return &ttyBar{b: progressbar.NewOptions(total, progressbar.OptionSetWriter(p.w), progressbar.OptionSetDescription(label),
		progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())}
}

type ttyBar struct{ b *progressbar.ProgressBar }

// Add implements Bar.
func (b *ttyBar) Add(n int) { _ = b.b.Add(n) }

// Done implements Bar.
func (b *ttyBar) Done() { _ = b.b.Finish() }

type lineProgress struct{ w io.Writer }

// Start implements Progress with a plain start line.
func (p lineProgress) Start(label string, total int) Bar {
	fmt.Fprintf(p.w, "%s: %d steps\n", label, total)
	return &lineBar{w: p.w, label: label, total: total}
}

type lineBar struct {
	mu    sync.Mutex
	w     io.Writer
	label string
	done  int
	total int
}

// Add implements Bar.
func (b *lineBar) Add(n int) {
	b.mu.Lock()
	b.done += n
	b.mu.Unlock()
}

// Done implements Bar with a plain end line.
func (b *lineBar) Done() {
	b.mu.Lock()
	defer b.mu.Unlock()
	fmt.Fprintf(b.w, "%s: done (%d/%d)\n", b.label, b.done, b.total)
}
