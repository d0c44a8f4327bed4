package cputime

import (
	"crypto/sha256"
	"testing"
)

// A busy loop raises the process's CPU time by at least the loop's own share of it, and the
// counter never runs backwards.
func TestProcessGrowsWithWork(t *testing.T) {
	before, err := Process()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(nil)
	for i := 0; i < 200_000; i++ {
		sum = sha256.Sum256(sum[:])
	}
	after, err := Process()
	if err != nil {
		t.Fatal(err)
	}
	if after <= before {
		t.Fatalf("CPU time %v after 200,000 hashes, %v before", after, before)
	}
}
