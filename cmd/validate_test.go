package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFlagsRefusedBeforeWork (issue 16): impossible flag and config values are refused before
// any work (no benchmark read, no encoder run, no output directory), naming the flag or key.
func TestFlagsRefusedBeforeWork(t *testing.T) {
	t.Setenv("RATED_ASSETS", t.TempDir())
	bench := writeBench(t, goodBenchFiles())
	inf := filepath.Join(t.TempDir(), "inf.yaml")
	os.WriteFile(inf, []byte("policies:\n  - {name: x, kind: rated, alpha: .inf, gamma: 0.9}\n"), 0o644)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"offline rounds -1", []string{"eval", "offline", "--rounds", "-1"}, "--rounds -1"},
		{"offline rounds 0 with a baseline", []string{"eval", "offline", "--rounds", "0"}, "--rounds 0"},
		{"offline depth 0", []string{"eval", "offline", "--depth", "0"}, "--depth 0"},
		{"latency failure-rate 2", []string{"eval", "latency", "--failure-rate", "2"}, "--failure-rate 2"},
		{"latency failure-rate NaN", []string{"eval", "latency", "--failure-rate", "NaN"}, "--failure-rate NaN"},
		{"latency failure-rate -0.1", []string{"eval", "latency", "--failure-rate", "-0.1"}, "--failure-rate -0.1"},
		{"latency queries 0", []string{"eval", "latency", "--queries", "0"}, "--queries 0"},
		{"latency warmup -1", []string{"eval", "latency", "--warmup", "-1"}, "--warmup -1"},
		{"latency sizes -5", []string{"eval", "latency", "--sizes", "100,-5"}, "--sizes -5"},
		{"latency sweep-queries 0", []string{"eval", "latency", "--sweep-queries", "0"}, "--sweep-queries 0"},
		{"latency k -3", []string{"eval", "latency", "--k", "-3"}, "--k -3"},
		{"dynamic alpha .inf", []string{"eval", "dynamic", "--config", inf}, "policies[0].alpha = +Inf"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			_, stderr, err := runRated(append(c.args, "--bench", bench, "--out", out)...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
			if stderr != "" {
				t.Errorf("work started before the refusal:\n%s", stderr)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was created", out)
			}
		})
	}
}

// TestFinetuneNumericFlagsRefusedFirst: a temperature, learning rate or batch that cannot train
// is refused before the benchmark is read or the training graph is built (15 s or more).
func TestFinetuneNumericFlagsRefusedFirst(t *testing.T) {
	dirs := []string{"--model", t.TempDir(), "--bench", t.TempDir(), "--out", filepath.Join(t.TempDir(), "out")}
	for flag, want := range map[string]string{
		"--tau=-1": "--tau -1", "--tau=NaN": "--tau NaN", "--lr=0": "--lr 0", "--lr=+Inf": "--lr +Inf",
		"--batch=0": "--batch 0", "--hard-negatives=-1": "--hard-negatives -1", "--max-len=1": "--max-len 1",
		"--epochs=-2": "--epochs -2", "--warmup=-1": "--warmup -1", "--max-loss-ratio=NaN": "--max-loss-ratio NaN",
	} {
		if err := runFinetune(append([]string{flag}, dirs...)...); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", flag, err, want)
		}
	}
}
