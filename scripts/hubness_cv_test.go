package scripts

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rated-dev/rated/internal/testassets"
)

// TestHubnessCVMatchesScikitLearn runs hubness-cv.py on a decision log of 80 queries over 20
// tools, whose relevance falls with a tool's hubness, and checks its cross-validated log-losses
// against the same folds computed with scikit-learn's exact logistic solver (C = 1/ridge), the
// counts and features written again in the reference.
func TestHubnessCVMatchesScikitLearn(t *testing.T) {
	py := python3(t)
	ref := testassets.Python(t) // the venv with scikit-learn
	rng := rand.New(rand.NewPCG(4, 5))
	dir := t.TempDir()
	logs := filepath.Join(dir, "log")
	if err := os.Mkdir(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	var lines []string
	qrels := "query-id\tcorpus-id\tscore\n"
	lists := map[string][]string{}
	for q := 0; q < 80; q++ {
		id := fmt.Sprintf("q%02d", q)
		perm := rng.Perm(20)
		// Hubs (low tool numbers) come first more often: sort a noisy key.
		type cand struct {
			tool int
			key  float64
		}
		var cs []cand
		for _, i := range perm {
			cs = append(cs, cand{i, float64(i) + 8*rng.Float64()})
		}
		for a := 1; a < len(cs); a++ {
			for b := a; b > 0 && cs[b].key < cs[b-1].key; b-- {
				cs[b], cs[b-1] = cs[b-1], cs[b]
			}
		}
		var cands []map[string]any
		top := 0.7 + 0.2*rng.Float64()
		for r, c := range cs[:6] {
			tool := fmt.Sprintf("t%02d", c.tool)
			cands = append(cands, map[string]any{"tool": tool, "semantic": top - 0.03*float64(r) - 0.01*rng.Float64(), "calibrated": 0.5})
			lists[id] = append(lists[id], tool)
			if rng.Float64() < 0.15+0.05*float64(c.tool)-0.04*float64(r) {
				qrels += id + "\t" + tool + "\t1\n"
			}
		}
		b, _ := json.Marshal(map[string]any{"v": 1, "kind": "decision", "id": id + "/0", "t": q, "policy": "Retry (k=3)", "attempt": 0,
			"query": map[string]string{"id": id}, "candidates": cands})
		lines = append(lines, string(b))
	}
	// A second decision of q00 (its list again) must be ignored.
	lines = append(lines, strings.Replace(lines[0], `"t":0`, `"t":90`, 1))
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("log/execution_flaky-20_Retry-k=3_seed1-000001.jsonl", strings.Join(lines, "\n")+"\n")
	qrelsPath := write("qrels.tsv", qrels)
	corpus := ""
	for i := 0; i < 25; i++ { // five tools no query retrieves
		corpus += fmt.Sprintf("{\"_id\": \"t%02d\", \"title\": \"x\", \"text\": \"y\"}\n", i)
	}
	corpusPath := write("corpus.jsonl", corpus)

	out, err := exec.Command(py, "hubness-cv.py", logs, qrelsPath, "--corpus", corpusPath, "--depths", "3", "--strengths", "2").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := map[string]float64{}
	for _, line := range strings.Split(string(out), "\n") {
		label, rest, ok := strings.Cut(line, " | log-loss ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.Fields(rest)[0], 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		got[label] = v
	}
	script := `
import hashlib, json, math, sys
import numpy as np
from sklearn.linear_model import LogisticRegression
lists, qrels = json.load(open(sys.argv[1])), sys.argv[2]
rel = set()
for line in open(qrels).read().splitlines()[1:]:
    q, t, s = line.split("\t")
    rel.add((q, t))
sem = json.load(open(sys.argv[3]))
fold = {q: int(hashlib.md5(q.encode()).hexdigest(), 16) % 2 for q in lists}
depth, a, share = 3, 2.0, 3 / 25
def rows(qs, hub):
    X, y = [], []
    for q in qs:
        top = sem[q][0]
        for i, t in enumerate(lists[q]):
            x = [sem[q][i], sem[q][i] - top, math.log1p(i)]
            if hub is not None:
                x.append(hub(q, i, t))
            X.append(x)
            y.append(1 if (q, t) in rel else 0)
    return np.array(X), np.array(y)
def loss(m, X, y):
    p = m.predict_proba(X)[:, 1]
    return -float(np.sum(y * np.log(p) + (1 - y) * np.log(1 - p)))
out = {"base": 0.0, "hub": 0.0}
n_ex = sum(len(v) for v in lists.values())
for f in (0, 1):
    bank = [q for q in lists if fold[q] != f]
    held = [q for q in lists if fold[q] == f]
    count = {}
    for q in bank:
        for t in lists[q][:depth]:
            count[t] = count.get(t, 0) + 1
    n = len(bank)
    solver = dict(C=1e6, solver="newton-cholesky", tol=1e-14, max_iter=1000)
    m = LogisticRegression(**solver).fit(*rows(bank, None))
    out["base"] += loss(m, *rows(held, None))
    fit_hub = lambda q, i, t: math.log((count.get(t, 0) - (1 if i < depth else 0) + a * share) / (n - 1 + a))
    use_hub = lambda q, i, t: math.log((count.get(t, 0) + a * share) / (n + a))
    m = LogisticRegression(**solver).fit(*rows(bank, fit_hub))
    out["hub"] += loss(m, *rows(held, use_hub))
print(json.dumps({k: v / n_ex for k, v in out.items()}))
`
	sems := map[string][]float64{}
	for _, l := range lines[:80] {
		var r struct {
			Query      struct{ ID string }
			Candidates []struct{ Semantic float64 }
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		for _, c := range r.Candidates {
			sems[r.Query.ID] = append(sems[r.Query.ID], c.Semantic)
		}
	}
	lj, _ := json.Marshal(lists)
	sj, _ := json.Marshal(sems)
	refOut, err := exec.Command(ref, "-c", script, write("lists.json", string(lj)), qrelsPath, write("sem.json", string(sj))).CombinedOutput()
	if err != nil {
		t.Fatalf("scikit-learn: %v\n%s", err, refOut)
	}
	var want struct{ Base, Hub float64 }
	if err := json.Unmarshal(refOut, &want); err != nil {
		t.Fatalf("%v: %s", err, refOut)
	}
	for label, w := range map[string]float64{"base (S_sem, gap to top, log(1+rank))": want.Base, "depth 3 strength 2": want.Hub} {
		g, ok := got[label]
		if !ok {
			t.Fatalf("no %q row in\n%s", label, out)
		}
		if math.Abs(g-w) > 1e-5 { // the script prints five decimals
			t.Errorf("%s: log-loss %v, scikit-learn %v", label, g, w)
		}
	}
	if math.Abs(want.Hub-want.Base) < 1e-3 {
		t.Errorf("the hubness feature changes the log-loss by %v only: the case does not test it", want.Hub-want.Base)
	}
	if !strings.Contains(string(out), "80 queries") {
		t.Errorf("q00's second decision was counted as a query:\n%s", out)
	}
}
