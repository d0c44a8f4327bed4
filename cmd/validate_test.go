package cmd

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rated-dev/rated/configs"
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
		{"dynamic seeds 1,1,1", []string{"eval", "dynamic", "--seeds", "1,1,1"}, "dynamic.seeds: seed 1 listed twice"},
		// Once refused only when their row of the sweep came, after Table 3 was measured.
		{"latency ivf-probes 0", []string{"eval", "latency", "--ivf-probes", "32,0"}, "--ivf-probes 0"},
		{"latency ann-m 1", []string{"eval", "latency", "--ann-m", "1"}, "hnsw: M 1 (want >= 2)"},
		{"latency sweep-batch -3", []string{"eval", "latency", "--sweep-batch", "-3"}, "--sweep-batch -3: must be at least 1"},
		{"latency sweep-batch 0", []string{"eval", "latency", "--sweep-batch", "0"}, "--sweep-batch 0: must be at least 1"},
		{"latency sweep-components -1", []string{"eval", "latency", "--sweep-components", "-1"}, "--sweep-components -1"},
		{"dynamic workers -1", []string{"eval", "dynamic", "--workers", "-1"}, "--workers -1"},
		// Checked against the benchmark, before the catalog is encoded.
		{"latency unknown split", []string{"eval", "latency", "--retriever", "bm25", "--split", "nosuch"}, `--split "nosuch"`},
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

// TestDynamicSplitRefusedBeforeEncoding: a --split or dynamic.calibration the benchmark lacks
// used to be refused only after the whole catalog was encoded (13 s on the default benchmark);
// now it is refused right after the benchmark is read, before the encoder is opened (here no
// encoder is installed, which used to be the error) or BM25 is built.
func TestDynamicSplitRefusedBeforeEncoding(t *testing.T) {
	t.Setenv("RATED_ASSETS", t.TempDir())
	files := goodBenchFiles()
	files["qrels/dev.tsv"] = "q4\tmail\t1\n"
	bench := writeBench(t, files)
	calib := filepath.Join(t.TempDir(), "calibration.yaml")
	os.WriteFile(calib, []byte("dynamic:\n  calibration: nosuch\n"), 0o644)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"split nosuch, dense", []string{"--split", "nosuch"}, `split "nosuch" (--split, dynamic.split) has no queries with qrels (splits: [dev test])`},
		{"split nosuch, bm25", []string{"--split", "nosuch", "--retriever", "bm25"}, `split "nosuch" (--split, dynamic.split) has no queries with qrels`},
		{"calibration nosuch, dense", []string{"--config", calib}, `dynamic.calibration = "nosuch" has no queries with qrels (splits: [dev test])`},
		{"calibration nosuch, bm25", []string{"--config", calib, "--retriever", "bm25"}, `dynamic.calibration = "nosuch"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"eval", "dynamic", "--bench", bench, "--out", out}, c.args...)
			_, stderr, err := runRated(args...)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), bench) {
				t.Fatalf("error %v, want it to name %s and contain %q", err, bench, c.want)
			}
			for _, work := range []string{"timeline:", "retriever:", "encode catalog"} {
				if strings.Contains(stderr, work) {
					t.Errorf("work started before the refusal (%q):\n%s", work, stderr)
				}
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was created", out)
			}
		})
	}
}

// TestSweepHelpNamesShippedConfigs: the --sweep help and the error of a configuration without a
// sweep section named configs/sweep-recommended.yaml, which does not exist. Every configs/*.yaml
// they name must be a shipped file, and the error names at least one.
func TestSweepHelpNamesShippedConfigs(t *testing.T) {
	_, _, err := runRated("eval", "dynamic", "--sweep", "--out", filepath.Join(t.TempDir(), "out"))
	if err == nil || !strings.Contains(err.Error(), "no sweep section") {
		t.Fatalf("--sweep without a sweep section: %v", err)
	}
	help, _, herr := runRated("eval", "dynamic", "--help")
	if herr != nil {
		t.Fatal(herr)
	}
	named := regexp.MustCompile(`configs/([a-z0-9-]+\.yaml)`)
	for where, text := range map[string]string{"error": err.Error(), "help": help} {
		found := named.FindAllStringSubmatch(text, -1)
		if len(found) == 0 {
			t.Errorf("the %s names no configs/*.yaml", where)
		}
		for _, m := range found {
			if _, err := fs.Stat(configs.Files, m[1]); err != nil {
				t.Errorf("the %s names %s, which is not shipped", where, m[0])
			}
		}
	}
	if !strings.Contains(err.Error(), "configs/sweep-reliability.yaml") {
		t.Errorf("error %v names no sweep example", err)
	}
}

// TestDecisionLogOfAnEarlierRunRefused: eval dynamic does not resume, and rerunning it with the
// same --decision-log used to append to the earlier run's files (eval replay then refused the
// repeated decision ids, or pooled two experiments). A directory that holds decision-log files
// is refused before any work, naming it; the earlier files stay as they were.
func TestDecisionLogOfAnEarlierRunRefused(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "tiny.yaml")
	os.WriteFile(cfg, []byte(`dynamic: {steps: 400, summary_from: 100, summary_to: 300, as_window: 50, seeds: [1], split: test, curve_stride: 50, compare: []}
scenarios:
  - {name: p20, failure_rate: 0.2, theta: 0.9, events: [{kind: persistent, start: 100, select: {by: frequency, skip_top: 0.1, fraction: 0.2}}]}
policies:
  - {name: static, kind: static}
`), 0o644)
	logDir := filepath.Join(t.TempDir(), "log")
	args := func() []string {
		return []string{"eval", "dynamic", "--config", cfg, "--retriever", "bm25", "--decision-log", logDir, "--out", filepath.Join(t.TempDir(), "out")}
	}
	if _, stderr, err := runRated(args()...); err != nil {
		t.Fatalf("first run: %v\n%s", err, stderr)
	} else if !strings.Contains(stderr, `warning: goals.policy = "RATED-R (recommended)" names no policy of this run`) {
		// tiny.yaml replaces the policies and keeps paper.yaml's goals.
		t.Errorf("no warning that goals.* are not written:\n%s", stderr)
	}
	want := filepath.Join(logDir, "execution_p20_static_seed1-000001.jsonl")
	before, err := os.ReadFile(want)
	if err != nil || len(before) == 0 {
		t.Fatalf("the first run wrote no %s: %v", want, err)
	}
	_, stderr, err := runRated(args()...)
	if err == nil || !strings.Contains(err.Error(), "--decision-log "+logDir+" already holds the decision-log files of an earlier run (execution_p20_static_seed1-000001.jsonl; 1 *.jsonl in all)") ||
		!strings.Contains(err.Error(), "choose a new directory") {
		t.Fatalf("second run into the same --decision-log: %v", err)
	}
	if stderr != "" {
		t.Errorf("work started before the refusal:\n%s", stderr)
	}
	if after, _ := os.ReadFile(want); string(after) != string(before) {
		t.Errorf("%s changed: %d bytes, then %d", want, len(before), len(after))
	}
	// Any *.jsonl counts (eval replay reads them all from a directory); other files do not.
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "README.txt"), []byte("notes"), 0o644)
	if _, stderr, err := runRated("eval", "dynamic", "--config", cfg, "--retriever", "bm25", "--decision-log", other, "--out", filepath.Join(t.TempDir(), "out")); err != nil {
		t.Fatalf("a directory without decision-log files: %v\n%s", err, stderr)
	}
}

// TestOfflineRetrieversCheckedFirst: a retriever named wrong is refused after the benchmark is
// read (its warnings may show) but before any retriever runs or --out is made, even when it
// follows good ones: a model that is not installed, a nested part of rrf:.
func TestOfflineRetrieversCheckedFirst(t *testing.T) {
	t.Setenv("RATED_ASSETS", t.TempDir())
	bench := writeBench(t, goodBenchFiles())
	for _, c := range []struct{ retrievers, want string }{
		{"bm25,dense:nosuch", "retriever dense:nosuch: encoder model folder nosuch"},
		{"bm25,rrf:bm25+rated-full:nosuch", `part "rated-full:nosuch"`},
	} {
		out := filepath.Join(t.TempDir(), "out")
		_, stderr, err := runRated("eval", "offline", "--bench", bench, "--out", out, "--retrievers", c.retrievers, "--baseline", "bm25")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.retrievers, err, c.want)
		}
		if strings.Contains(stderr, "BM25") {
			t.Errorf("%s: a retriever ran before the refusal:\n%s", c.retrievers, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: %s was created", c.retrievers, out)
		}
	}
}

// TestCrawlFlagsRefusedBeforeWork: probe durations that were replaced silently (a zero timeout
// became 10 s in the prober and 1 s in its client; a negative backoff became 0.5 s), and a
// platform or source found bad only after the first platform was crawled, are refused first.
func TestCrawlFlagsRefusedBeforeWork(t *testing.T) {
	t.Setenv("RATED_ASSETS", t.TempDir())
	missing := filepath.Join(t.TempDir(), "nonexistent")
	for args, want := range map[string]string{
		"--probe-timeout 0":                         "--probe-timeout 0s",
		"--probe-backoff -1s":                       "--probe-backoff -1s",
		"--probe-host-interval -2s":                 "--probe-host-interval -2s",
		"--platform n8n,bogus":                      `--platform "bogus"`,
		"--platform n8n --source crewai=" + missing: "--source crewai=" + missing,
	} {
		out := filepath.Join(t.TempDir(), "catalog.jsonl")
		_, stderr, err := runRated(append(append([]string{"crawl"}, strings.Fields(args)...), "--out", out)...)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("crawl %s: error %v, want it to contain %q", args, err, want)
		}
		if stderr != "" {
			t.Errorf("crawl %s: work started before the refusal:\n%s", args, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("crawl %s: %s was created", args, out)
		}
	}
}

// TestSweepAndLogNamesCheckedFirst: a sweep on the test split was refused only after the catalog
// was encoded; --decision-log with --sweep was ignored without a word; policy names that share a
// decision-log prefix mixed two runs' decisions in one file. All three are refused before the
// benchmark is read or --out is made.
func TestSweepAndLogNamesCheckedFirst(t *testing.T) {
	twins := filepath.Join(t.TempDir(), "twins.yaml")
	os.WriteFile(twins, []byte("dynamic: {compare: []}\npolicies:\n  - {name: \"Static (A)\", kind: static}\n  - {name: \"Static A\", kind: static}\n"), 0o644)
	extended := filepath.Join("..", "configs", "extended.yaml")
	sweepCfg := filepath.Join("..", "configs", "sweep-reliability.yaml")
	missing := filepath.Join(t.TempDir(), "no-bench")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"sweep on test", []string{"--config", extended, "--config", sweepCfg, "--sweep", "--split", "test"}, "sweep: dynamic.split = test"},
		{"sweep with a decision log", []string{"--config", extended, "--config", sweepCfg, "--sweep", "--decision-log", filepath.Join(t.TempDir(), "log")}, "--decision-log with --sweep"},
		{"twin policy names", []string{"--config", twins, "--decision-log", filepath.Join(t.TempDir(), "log")}, `policy "Static A", seed 1 would share the decision-log prefix`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"eval", "dynamic", "--bench", missing, "--out", out}, c.args...)
			_, stderr, err := runRated(args...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
			if strings.Contains(err.Error(), missing) || stderr != "" {
				t.Errorf("the benchmark was read or work started before the refusal: %v\n%s", err, stderr)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was created", out)
			}
		})
	}
}
