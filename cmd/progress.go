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
// plain line every 10%.
func newProgress(w io.Writer, label string) func(done, total int) {
	var mu sync.Mutex
	var bar *progressbar.ProgressBar
	lastDecile := -1
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	return func(done, total int) {
		mu.Lock()
		defer mu.Unlock()
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
