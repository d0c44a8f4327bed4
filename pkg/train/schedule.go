package train

// Schedule is the learning-rate schedule of the paper's recipe: linear warm-up from 0 to Peak over
// Warmup steps, then linear decay to 0 at Total steps.
type Schedule struct {
	Peak   float64
	Warmup int
	Total  int
}

// LR is the learning rate of optimizer step step (0-based): Peak*(step+1)/Warmup during the
// warm-up (so the first step already moves), then Peak*(Total-step)/(Total-Warmup), never below 0.
func (s Schedule) LR(step int) float64 {
	if step < s.Warmup {
		return s.Peak * float64(step+1) / float64(s.Warmup)
	}
	if s.Total <= s.Warmup {
		return s.Peak
	}
	f := float64(s.Total-step) / float64(s.Total-s.Warmup)
	if f < 0 {
		return 0
	}
	return s.Peak * f
}
