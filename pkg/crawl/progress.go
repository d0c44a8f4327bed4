package crawl

// Progress reports the advance of the crawl (one stage per platform) and of the probes (one per
// batch); internal/progress implements it for the command line.
type Progress interface {
	// Start announces a stage with total steps, done of them already finished.
	Start(stage string, total, done int)
	// Add reports n more finished steps; it may be called from several goroutines.
	Add(n int)
	// Finish ends the stage.
	Finish()
}

// NopProgress reports nothing.
type NopProgress struct{}

// Start implements Progress.
func (NopProgress) Start(string, int, int) {}

// Add implements Progress.
func (NopProgress) Add(int) {}

// Finish implements Progress.
func (NopProgress) Finish() {}
