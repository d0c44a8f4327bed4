// Package cputime reads the CPU time a process has used, for benchmarks on shared machines:
// wall time also counts the time spent waiting for a core, CPU time only the work done.
package cputime

import (
	"syscall"
	"time"
)

// Process is the CPU time (user + system, all threads) this process has used so far.
func Process() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
