package cmd

import (
	"io"
	"time"

	"github.com/rated-dev/rated/internal/progress"
)

// newProgress returns a done/total callback reporting to w: a bar on a terminal, plain lines
// otherwise (internal/progress).
func newProgress(w io.Writer, label string) func(done, total int) {
	return progress.Func(progress.ForWriter(w, time.Now), label)
}
