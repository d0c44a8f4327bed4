package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestCrawlStatsCarryTheRun: rated crawl writes, beside the per-platform stats, the record of
// the run (rated's build and the asset home it read its sources from); the wiring from the
// command to crawl.RunOptions.Provenance was untested.
func TestCrawlStatsCarryTheRun(t *testing.T) {
	home := t.TempDir()
	t.Setenv("RATED_HOME", home)
	dir := t.TempDir()
	out, stats := filepath.Join(dir, "catalog.jsonl"), filepath.Join(dir, "stats.json")
	src, err := filepath.Abs(filepath.Join("..", "pkg", "crawl", "testdata", "n8n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := runRated("crawl", "--platform", "n8n", "--source", "n8n="+src, "--out", out, "--stats-out", stats); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	raw, err := os.ReadFile(stats)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Run struct {
			Rated struct {
				Module  string  `json:"module"`
				Version string  `json:"version"`
				Commit  *string `json:"commit"`
			} `json:"rated"`
			Home string `json:"home"`
		} `json:"run"`
		Platforms []struct {
			Platform string `json:"platform"`
			Tools    int    `json:"tools"`
		} `json:"platforms"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("%s: %v", stats, err)
	}
	if got.Run.Home != home || got.Run.Rated.Version == "" || got.Run.Rated.Commit == nil {
		t.Errorf("run record %+v, want home %s, a version and a commit field", got.Run, home)
	}
	if len(got.Platforms) != 1 || got.Platforms[0].Platform != "n8n" || got.Platforms[0].Tools == 0 {
		t.Errorf("platforms %+v, want n8n with its tools", got.Platforms)
	}
}
