package router

import "github.com/rated-dev/rated/pkg/bandit"

// CrashForTest stops r as kill -9 would after its last durable commit: no final snapshot and
// the store closed as it is.
func (r *Router) CrashForTest() {
	r.closed.Store(true)
	close(r.stopJan)
	<-r.janDone
	r.commits.stop()
	r.store.Close()
	if r.cfg.Log != nil {
		r.cfg.Log.Close()
	}
}

// PolicyStateForTest is the policy's snapshot.
func (r *Router) PolicyStateForTest() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, err := bandit.Snapshot(r.pol)
	if err != nil {
		panic(err)
	}
	return b
}
