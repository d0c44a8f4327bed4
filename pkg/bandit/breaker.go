package bandit

// BreakerConfig configures a per-tool circuit breaker. Time is counted in steps (one request per
// step), so "cool-down 60" is gobreaker's 60 s timeout at one request a second.
type BreakerConfig struct {
	// ConsecutiveFailures trips the breaker when a closed breaker sees more than this many failures
	// in a row (gobreaker's default ReadyToTrip: ConsecutiveFailures > 5). 0 disables the rule.
	ConsecutiveFailures int
	// FailureRate trips when, with at least MinCalls outcomes in the last Window calls, the share of
	// failures is >= FailureRate (resilience4j: 50% over 100 calls, minimum 100). 0 disables.
	FailureRate float64
	Window      int
	MinCalls    int
	// CoolDown is how many steps an open breaker waits before letting trial calls through.
	CoolDown int
	// HalfOpenCalls is how many consecutive successful trial calls close it again (gobreaker's
	// MaxRequests, default 1; resilience4j's permittedNumberOfCallsInHalfOpenState, default 10).
	HalfOpenCalls int
}

type breakerState int

const (
	closed breakerState = iota
	open
	halfOpen
)

type toolBreaker struct {
	state       breakerState
	consecutive int
	openedAt    int
	trials      int
	recent      []bool // last Window outcomes, true = failure (ring buffer)
	next        int
	filled      int
	failures    int
}

// CircuitBreaker ranks like the retriever and skips tools whose breaker is open; after the
// cool-down a breaker is half-open and lets trial calls through; success closes it, a failure
// re-opens it. Unlike the paper's blacklist it forgives, as production breakers do.
type CircuitBreaker struct {
	label    string
	cfg      BreakerConfig
	breakers []toolBreaker
}

// NewCircuitBreaker returns the policy for numTools tools.
func NewCircuitBreaker(name string, cfg BreakerConfig, numTools int) *CircuitBreaker {
	return &CircuitBreaker{label: name, cfg: cfg, breakers: make([]toolBreaker, numTools)}
}

// Name implements Policy.
func (p *CircuitBreaker) Name() string { return p.label }

// allows reports whether tool may be called at step t, moving open breakers past their cool-down
// to half-open.
func (p *CircuitBreaker) allows(tool, t int) bool {
	p.breakers = grow(p.breakers, tool)
	b := &p.breakers[tool]
	if b.state == open && t-b.openedAt >= p.cfg.CoolDown {
		b.state, b.trials = halfOpen, 0
	}
	return b.state != open
}

// Choose implements Policy.
func (p *CircuitBreaker) Choose(s *Step) int {
	return firstAllowed(s, func(i int) bool { return p.allows(s.Candidates[i].Tool, s.T) })
}

// Observe implements Policy.
func (p *CircuitBreaker) Observe(s *Step, pos int, fb Feedback) {
	success := fb.Executed // a breaker guards against errors and timeouts, whatever the protocol
	// Apply the cool-down's lazy open → half-open move at this step first, as Choose would have:
	// the state then depends on the outcomes alone, so replaying them reproduces it.
	p.allows(s.Candidates[pos].Tool, s.T)
	b := &p.breakers[s.Candidates[pos].Tool]
	switch b.state {
	case halfOpen:
		if !success {
			p.trip(b, s.T)
			return
		}
		b.trials++
		if b.trials >= max(1, p.cfg.HalfOpenCalls) {
			*b = toolBreaker{recent: b.recent[:0]}
		}
	case open:
		// A call through an open breaker only happens in the all-open fallback: restart its timer.
		if !success {
			b.openedAt = s.T
		}
	case closed:
		if success {
			b.consecutive = 0
		} else {
			b.consecutive++
		}
		p.record(b, !success)
		if (p.cfg.ConsecutiveFailures > 0 && b.consecutive > p.cfg.ConsecutiveFailures) ||
			(p.cfg.FailureRate > 0 && b.filled >= max(1, p.cfg.MinCalls) &&
				float64(b.failures)/float64(b.filled) >= p.cfg.FailureRate) {
			p.trip(b, s.T)
		}
	}
}

func (p *CircuitBreaker) trip(b *toolBreaker, t int) {
	*b = toolBreaker{state: open, openedAt: t, recent: b.recent[:0]}
}

func (p *CircuitBreaker) record(b *toolBreaker, failed bool) {
	if p.cfg.Window <= 0 {
		return
	}
	if len(b.recent) < p.cfg.Window {
		b.recent = append(b.recent, failed)
		b.filled++
		if failed {
			b.failures++
		}
		return
	}
	if b.recent[b.next] {
		b.failures--
	}
	b.recent[b.next] = failed
	if failed {
		b.failures++
	}
	b.next = (b.next + 1) % p.cfg.Window
}
