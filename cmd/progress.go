package cmd

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// newProgress returns a callback reporting done/total: a progress bar on a terminal, otherwise a
// plain line every 10%. A callback shared by several jobs in turn (eval offline's retrievers)
// starts over when the total changes or done goes back.
func newProgress(w io.Writer, label string) func(done, total int) {
	var mu sync.Mutex
	var bar *progressbar.ProgressBar
	lastDecile, lastDone, lastTotal := -1, 0, -1
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	return func(done, total int) {
		mu.Lock()
		defer mu.Unlock()
		if total != lastTotal || done < lastDone {
			if bar != nil {
				bar.Finish()
			}
			bar, lastDecile = nil, -1
		}
		lastDone, lastTotal = done, total
		if tty {
			if bar == nil {
				bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(label),
					progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true), progressbar.OptionClearOnFinish())
			}
			bar.Set(done)
			return
		}
		if d := done * 10 / max(1, total); d != lastDecile {
			lastDecile = d
			fmt.Fprintf(w, "%s: %d/%d\n", label, done, total)
		}
	}
}
