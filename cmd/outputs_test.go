package cmd

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rated-dev/rated/internal/outdir"
	"github.com/rated-dev/rated/internal/testassets"
)

// treeDigest maps every file under dir (relative path) to its sha256, so a whole output set can
// be compared before and after a failed run.
func treeDigest(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		sum := sha256.Sum256(data)
		out[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// leftovers lists temporary files or directories that a run left beside or inside dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, root := range []string{filepath.Dir(dir), dir} {
		entries, _ := os.ReadDir(root)
		for _, e := range entries {
			if strings.Contains(e.Name(), ".tmp-") || strings.Contains(e.Name(), ".old-") {
				out = append(out, filepath.Join(root, e.Name()))
			}
		}
	}
	return out
}

// dynamicBench is the small benchmark with a dev split too (the calibration split of the
// oracle rows of configs/paper.yaml).
func dynamicBench(t *testing.T) string {
	files := goodBenchFiles()
	files["qrels/dev.tsv"] = "q4\tmail\t1\nq1\tslack\t1\n"
	return writeBench(t, files)
}

// signalWriter closes first at its first write: the moment a run has started.
type signalWriter struct {
	once  sync.Once
	first chan struct{}
	mu    sync.Mutex
	buf   bytes.Buffer
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.first) })
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

// TestConcurrentEvalDynamicRefused (issue 16 item 14): a second `eval dynamic --out D` while a
// first one runs is refused with a message naming D, and D ends up holding the first run's set,
// whole (its table2.json and config.yaml agree), never a mix of both runs' files.
func TestConcurrentEvalDynamicRefused(t *testing.T) {
	t.Setenv("RATED_ASSETS", t.TempDir())
	bench := dynamicBench(t)
	cfgA := filepath.Join(t.TempDir(), "a.yaml")
	cfgB := filepath.Join(t.TempDir(), "b.yaml")
	const proto = "dynamic: {steps: %d, summary_from: 1000, summary_to: 2500, as_window: 100, seeds: [1, 2], split: test, curve_stride: 50}\n" +
		"scenarios:\n  - {name: %s, failure_rate: 0.2, theta: 0.9, events: [{kind: persistent, start: 1000, select: {by: frequency, fraction: 0.2}}]}\n"
	os.WriteFile(cfgA, []byte(fmt.Sprintf(proto, 6000, "first")), 0o644)
	os.WriteFile(cfgB, []byte(fmt.Sprintf(proto, 3000, "second")), 0o644)
	out := filepath.Join(t.TempDir(), "D")
	run := func(cfg string, stderr *signalWriter) error {
		cmd := newRootCmd()
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(stderr)
		cmd.SetArgs([]string{"eval", "dynamic", "--bench", bench, "--config", cfg, "--out", out, "--retriever", "bm25"})
		return cmd.Execute()
	}
	a := &signalWriter{first: make(chan struct{})}
	errA := make(chan error, 1)
	go func() { errA <- run(cfgA, a) }()
	select {
	case <-a.first:
	case err := <-errA:
		t.Fatalf("first run ended before writing anything: %v", err)
	}
	errB := run(cfgB, &signalWriter{first: make(chan struct{})})
	if err := <-errA; err != nil {
		t.Fatalf("first run: %v\n%s", err, a.buf.String())
	}
	if errB == nil || !strings.Contains(errB.Error(), out) || !strings.Contains(errB.Error(), "in use") {
		t.Fatalf("second run: error %v, want a refusal naming %s", errB, out)
	}
	var table struct {
		Config struct {
			Scenarios []struct{ Name string } `json:"scenarios"`
		} `json:"config"`
	}
	data, err := os.ReadFile(filepath.Join(out, "table2.json"))
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(data, &table)
	cfgYAML, _ := os.ReadFile(filepath.Join(out, "config.yaml"))
	if len(table.Config.Scenarios) != 1 || table.Config.Scenarios[0].Name != "first" || !strings.Contains(string(cfgYAML), "name: first") {
		t.Fatalf("D mixes runs: table2.json scenarios %+v, config.yaml:\n%s", table.Config.Scenarios, cfgYAML)
	}
	if _, err := os.Stat(filepath.Join(out, "sr-second.png")); err == nil {
		t.Fatal("D holds the second run's plot")
	}
	if l := leftovers(t, out); len(l) > 0 {
		t.Fatalf("temporary files left: %v", l)
	}
}

// TestReusedOutHoldsNoStaleFiles (issue 16): rerunning into the same --out with fewer retrievers
// used to keep runs/tfidf.trec of the earlier run beside the new table.
func TestReusedOutHoldsNoStaleFiles(t *testing.T) {
	bench := writeBench(t, goodBenchFiles())
	out := filepath.Join(t.TempDir(), "out")
	if _, stderr, err := runRated("eval", "offline", "--bench", bench, "--out", out, "--rounds", "20", "--retrievers", "bm25,tfidf"); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "runs", "tfidf.trec")); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := runRated("eval", "offline", "--bench", bench, "--out", out, "--rounds", "20", "--retrievers", "bm25"); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "runs", "tfidf.trec")); err == nil {
		t.Fatal("runs/tfidf.trec of the earlier run is still in --out")
	}
	if _, err := os.Stat(filepath.Join(out, "runs", "bm25.trec")); err != nil {
		t.Fatal(err)
	}
}

// TestOutHoldingForeignFilesIsRefused: --out pointing at a directory with files rated did not
// write (a home directory, a source tree) is refused, never emptied.
func TestOutHoldingForeignFilesIsRefused(t *testing.T) {
	bench := writeBench(t, goodBenchFiles())
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, "notes.txt"), []byte("mine"), 0o644)
	_, _, err := runRated("eval", "offline", "--bench", bench, "--out", out, "--rounds", "20")
	if err == nil || !strings.Contains(err.Error(), "notes.txt") {
		t.Fatalf("error %v, want a refusal naming notes.txt", err)
	}
	if data, _ := os.ReadFile(filepath.Join(out, "notes.txt")); string(data) != "mine" {
		t.Fatal("notes.txt was changed")
	}
}

// TestDiskFullKeepsTheWholeOldSet (issue 16): on a full disk the run fails and --out still holds
// the earlier run's set, file for file, with no temporary files. It needs a small tmpfs (root).
func TestDiskFullKeepsTheWholeOldSet(t *testing.T) {
	mnt := t.TempDir()
	if err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", mnt).Run(); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v): the outdir unit tests simulate a full disk instead", err)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	bench := writeBench(t, goodBenchFiles())
	out := filepath.Join(mnt, "out")
	if _, stderr, err := runRated("eval", "offline", "--bench", bench, "--out", out, "--rounds", "20", "--retrievers", "bm25"); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	before := treeDigest(t, out)
	// Leave about 6 KB free: enough for the first files of the next set, not for all of them.
	filler, _ := os.Create(filepath.Join(mnt, "filler"))
	buf := make([]byte, 1024)
	for {
		if _, err := filler.Write(buf); err != nil {
			break
		}
	}
	filler.Close()
	os.Truncate(filler.Name(), mustSize(t, filler.Name())-6*1024)
	_, _, err := runRated("eval", "offline", "--bench", bench, "--out", out, "--rounds", "20", "--retrievers", "bm25,tfidf,bm25:k1=1.2,bm25:k1=0.9,bm25:b=0.5")
	if err == nil {
		t.Fatal("the run succeeded on a full disk")
	}
	after := treeDigest(t, out)
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatalf("--out changed on a failed run:\nbefore %v\nafter  %v", before, after)
	}
	if l := leftovers(t, out); len(l) > 0 {
		t.Fatalf("temporary files left: %v", l)
	}
	os.Remove(filler.Name())
	if _, stderr, err := runRated("eval", "offline", "--bench", bench, "--out", out, "--rounds", "20", "--retrievers", "bm25,tfidf"); err != nil {
		t.Fatalf("rerun after freeing space: %v\n%s", err, stderr)
	}
}

func mustSize(t *testing.T, p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// TestKillNineLeavesAWholeSet runs `eval dynamic` in a child process, kills it with SIGKILL at
// several moments (during the run and during the writing of its outputs), and checks that --out
// holds either the earlier run's whole set or the new one's, never a mix or temporary files
// after the next run.
func TestKillNineLeavesAWholeSet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	bench := dynamicBench(t)
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(cfg, []byte("dynamic: {steps: 3000, summary_from: 1000, summary_to: 2500, as_window: 100, seeds: [1], split: test, curve_stride: 50}\n"+
		"scenarios:\n  - {name: s, failure_rate: 0.2, theta: 0.9, events: [{kind: persistent, start: 1000, select: {by: frequency, fraction: 0.2}}]}\n"), 0o644)
	out := filepath.Join(t.TempDir(), "D")
	assets := t.TempDir() // one home: config.yaml records it
	child := func() *exec.Cmd {
		c := ratedChild("eval", "dynamic", "--bench", bench, "--config", cfg, "--out", out, "--retriever", "bm25")
		c.Env = append(c.Env, "RATED_ASSETS="+assets)
		return c
	}
	began := time.Now()
	if out, err := child().CombinedOutput(); err != nil {
		t.Fatalf("first run: %v\n%s", err, out)
	}
	took := time.Since(began)
	whole := treeDigest(t, out)
	// Kills spread over a run's length, the last ones while its outputs are written.
	for _, share := range []float64{0.05, 0.3, 0.6, 0.8, 0.9, 0.95, 0.99} {
		delay := time.Duration(share * float64(took))
		c := child()
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay)
		c.Process.Kill()
		c.Wait()
		got := treeDigest(t, out)
		// The run is deterministic: the set after any kill is the same whole set (old or new),
		// except for the time stamp in table2.json and the manifest.
		for name, sum := range whole {
			if strings.HasSuffix(name, "table2.json") || name == "manifest.json" {
				continue
			}
			if got[name] != sum {
				t.Fatalf("kill after %v: %s differs from a whole set (%d files now, %d in a whole set)", delay, name, len(got), len(whole))
			}
		}
		if len(got) != len(whole) {
			t.Fatalf("kill after %v: %d files, a whole set has %d: %v", delay, len(got), len(whole), got)
		}
	}
	if out, err := child().CombinedOutput(); err != nil {
		t.Fatalf("run after the kills: %v\n%s", err, out)
	}
	if l := leftovers(t, out); len(l) > 0 {
		t.Fatalf("temporary files left after a complete run: %v", l)
	}
}

// TestFinetuneKillNineResumesIntoOneSet: a fine-tune killed after a checkpoint resumes from
// checkpoints/ (kept in --out across runs), and --out then holds the whole model folder with its
// checkpoints; until then it holds nothing of the unfinished run.
func TestFinetuneKillNineResumesIntoOneSet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	assets := testassets.Dir(t)
	testassets.Need(t, "training-enabled ONNX Runtime library", filepath.Join(assets, "lib", "training", "libonnxruntime.so"))
	art := testassets.Need(t, "training artifacts all-minilm-l6-v2-test", filepath.Join(assets, "train", "all-minilm-l6-v2-test"))
	model := testassets.Model(t, "all-minilm-l6-v2")
	files := map[string]string{"corpus.jsonl": "", "queries.jsonl": "", "qrels/train.tsv": "", "qrels/dev.tsv": ""}
	words := []string{"slack", "gmail", "weather", "maps", "github", "jira", "currency", "stocks", "calendar", "translate"}
	for i, w := range words {
		files["corpus.jsonl"] += fmt.Sprintf("{\"_id\":%q,\"title\":%q,\"text\":\"the %s tool\"}\n", w, w, w)
		files["queries.jsonl"] += fmt.Sprintf("{\"_id\":\"q%d\",\"text\":\"please use %s now\"}\n{\"_id\":\"d%d\",\"text\":\"%s please\"}\n", i, w, i, w)
		files["qrels/train.tsv"] += fmt.Sprintf("q%d\t%s\t1\n", i, w)
		if i < 4 {
			files["qrels/dev.tsv"] += fmt.Sprintf("d%d\t%s\t1\n", i, w)
		}
	}
	bench := writeBench(t, files)
	out := filepath.Join(t.TempDir(), "ft")
	args := []string{"finetune", "--model", model, "--bench", bench, "--out", out, "--artifacts", art, "--home", assets,
		"--batch", "4", "--hard-negatives", "1", "--max-len", "16", "--tau", "0.05", "--epochs", "40", "--max-steps", "4",
		"--checkpoint-every", "2", "--val-split", "-", "--warmup", "2", "--threads", "1"}
	child := ratedChild(args...)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(out, "checkpoints", "state.json")
	deadline := time.Now().Add(120 * time.Second)
	for {
		if _, err := os.Stat(state); err == nil {
			break
		}
		if time.Now().After(deadline) {
			child.Process.Kill()
			t.Fatal("no checkpoint after 120 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	child.Process.Kill()
	child.Wait()
	for _, f := range []string{"model.onnx", "rated.yaml", "TRAINING.md", "manifest.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err == nil {
			t.Errorf("%s of the killed run is in --out", f)
		}
	}
	stdout, stderr, err := runRated(args...)
	if err != nil {
		t.Fatalf("rerun: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "finetune: resuming at step") {
		t.Errorf("the rerun did not resume:\n%s\n%s", stdout, stderr)
	}
	m, err := outdir.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.Files["model.onnx"] == "" || m.Files["rated.yaml"] == "" || m.Files["TRAINING.md"] == "" || !slices.Contains(m.Kept, "checkpoints") {
		t.Fatalf("manifest %+v", m)
	}
	if err := outdir.Verify(out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(state); err != nil {
		t.Fatalf("checkpoints not kept: %v", err)
	}
}

// TestEvalDynamicRefusesDecisionLogInsideOut: the output set replaces --out as a whole, so a
// decision log written inside it would vanish at the end of the run; the run is refused before
// any work, naming both paths, and nothing is created.
func TestEvalDynamicRefusesDecisionLogInsideOut(t *testing.T) {
	t.Setenv("RATED_ASSETS", t.TempDir())
	out := filepath.Join(t.TempDir(), "D")
	for _, log := range []string{filepath.Join(out, "dl"), out} {
		cmd := newRootCmd()
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		cmd.SetArgs([]string{"eval", "dynamic", "--out", out, "--decision-log", log, "--retriever", "bm25"})
		err := cmd.Execute()
		if err == nil || !strings.Contains(err.Error(), "--decision-log "+log) || !strings.Contains(err.Error(), out) {
			t.Fatalf("--decision-log %s: error %v, want a refusal naming it and --out", log, err)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Fatalf("--out %s exists after a refused run (%v)", out, err)
		}
	}
}

// TestInputsInsideOutAreRefused: eval dynamic --config exp/config.yaml --out exp replaced the
// user's config with the resolved one; an --out holding the --bench folder would lose it. Both
// are refused before any work, and the config is untouched.
func TestInputsInsideOutAreRefused(t *testing.T) {
	exp := t.TempDir()
	cfg := filepath.Join(exp, "config.yaml")
	const mine = "# my experiment\ndynamic: {seeds: [1]}\n"
	if err := os.WriteFile(cfg, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := runRated("eval", "dynamic", "--config", cfg, "--out", exp)
	if err == nil || !strings.Contains(err.Error(), "--config "+cfg+" is inside --out") {
		t.Fatalf("eval dynamic: %v", err)
	}
	if got, _ := os.ReadFile(cfg); string(got) != mine {
		t.Fatalf("config changed: %q", got)
	}
	_, _, err = runRated("eval", "offline", "--bench", filepath.Join(exp, "bench"), "--out", exp, "--retrievers", "bm25")
	if err == nil || !strings.Contains(err.Error(), "overlap") {
		t.Fatalf("eval offline: %v", err)
	}
}
