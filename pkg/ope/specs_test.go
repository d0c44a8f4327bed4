package ope

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rated-dev/rated/configs"
)

// TestLoadSpecsReadsTheShippedConfigs reads configs/paper.yaml as the docs write it, from a
// directory that does not hold it (the embedded copy): its fallback variant shares RATED-R's
// relevance model through a YAML alias (*kernel), which decoding each spec alone once lost.
func TestLoadSpecsReadsTheShippedConfigs(t *testing.T) {
	t.Chdir(t.TempDir())
	specs, skipped, err := LoadSpecs("configs/paper.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(skipped) == 0 || !strings.Contains(strings.Join(skipped, ","), "Availability oracle") {
		t.Errorf("skipped %v: want the oracles", skipped)
	}
	byName := map[string]int{}
	for i, s := range specs {
		byName[s.Name] = i
	}
	r, okR := byName["RATED-R (recommended)"]
	f, okF := byName["RATED-R + fallback (≤ 3 attempts)"]
	if !okR || !okF {
		t.Fatalf("specs %v lack RATED-R or its fallback", byName)
	}
	rel, fb := specs[r].Relevance, specs[f].Relevance
	if rel == nil || fb == nil || rel.Model != "kernel" || fb.Model != "kernel" || len(fb.Bandwidths) != 3 || fb.Bandwidths[2] != 0.2 || fb.MaxPrototypes != 64 {
		t.Errorf("fallback relevance %+v, want the kernel anchor's (model kernel, bandwidths [0.1 0.15 0.2], 64 prototypes)", fb)
	}
	if _, err := configs.ReadFile("configs/recommended.yaml"); err != nil {
		t.Fatal(err)
	}
	if s, _, err := LoadSpecs("configs/recommended.yaml"); err != nil || len(s) != 1 {
		t.Errorf("configs/recommended.yaml: %d specs, %v", len(s), err)
	}
}

// TestParseSpecsRefusesAliasBombs: five levels of ten aliases each (343 bytes) expand to 10⁵
// copies of a spec; inlining them took 1.1 GB. The depth bound alone never stopped it.
func TestParseSpecsRefusesAliasBombs(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 {name: x, kind: static}\n")
	for lvl := 1; lvl <= 5; lvl++ {
		fmt.Fprintf(&b, "a%d: &a%d [", lvl, lvl)
		for i := range 10 {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", lvl-1)
		}
		b.WriteString("]\n")
	}
	b.WriteString("policies: *a5\n")
	_, _, err := ParseSpecs([]byte(b.String()), "bomb.yaml")
	if err == nil || !strings.Contains(err.Error(), "bomb.yaml: its aliases expand to more than") {
		t.Fatalf("error %v, want the alias budget named", err)
	}
}
