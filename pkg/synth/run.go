package synth

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Progress receives the advance of a long run; internal/progress implements it for the command
// line (a bar on a terminal, plain lines otherwise).
type Progress interface {
	// Start announces a stage with total items, of which done are already finished (resumed).
	Start(stage string, total, done int)
	// Add reports n more finished items.
	Add(n int)
	// Finish ends the stage.
	Finish()
}

type nopProgress struct{}

func (nopProgress) Start(string, int, int) {}
func (nopProgress) Add(int)                {}
func (nopProgress) Finish()                {}

// job is one work item: its journal key and the function that produces its record.
type job struct {
	key string
	do  func(ctx context.Context) Record
}

// runJobs runs the jobs whose key has no successful record in the journal, at most concurrency at
// a time, appending each finished record to the journal as soon as it is done. It returns when all
// jobs are done or ctx ends (then the error is ctx's). Failed items are journaled as failures and
// do not stop the run; a journal that cannot be written does: the workers are cancelled, since
// every answer they went on to get would be lost.
func runJobs(parent context.Context, j *Journal, jobs []job, concurrency int, stage string, p Progress, now func() time.Time) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	if concurrency < 1 {
		concurrency = 1
	}
	var todo []job
	for _, jb := range jobs {
		if !j.Done(jb.key) {
			todo = append(todo, jb)
		}
	}
	p.Start(stage, len(jobs), len(jobs)-len(todo))
	defer p.Finish()
	work := make(chan job)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for w := 0; w < concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for jb := range work {
				if ctx.Err() != nil {
					continue // select may still hand out an item after the cancellation
				}
				start := now()
				r := jb.do(ctx)
				if ctx.Err() != nil && !r.OK {
					// Interrupted: leave the item for the next run rather than journaling a
					// failure that is only the interruption.
					continue
				}
				r.Key = jb.key
				r.ElapsedMS, r.Concurrency = now().Sub(start).Milliseconds(), concurrency
				if err := j.Append(r); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("%s: journal %s: %w", stage, j.path, err)
					}
					mu.Unlock()
					cancel()
					continue
				}
				p.Add(1)
			}
		}()
	}
feed:
	for _, jb := range todo {
		select {
		case <-ctx.Done():
			break feed
		case work <- jb:
		}
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return parent.Err()
}

// failureRecord turns a request error into a failed record.
func failureRecord(err error, seed int64) Record {
	r := Record{OK: false, Error: err.Error(), Seed: seed}
	var re *RequestError
	if errors.As(err, &re) {
		r.Attempts = re.Attempts
		r.Faults = re.Faults
	}
	return r
}
