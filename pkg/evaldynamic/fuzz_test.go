package evaldynamic

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/viper"

	"github.com/rated-dev/rated/internal/fuzzcount"
)

// FuzzLoadConfig feeds a --config file merged over configs/paper.yaml (seeds: configs/paper.yaml
// and configs/extended.yaml, testdata/fuzz/FuzzLoadConfig), which covers the dynamic settings,
// the scenarios, the policy specs and the prior. Any input is an error, or a configuration that
// validates and encodes to JSON (NaN or ±Inf would fail only there, after a whole run).
func FuzzLoadConfig(f *testing.F) {
	f.Add([]byte(small))
	// Refused: a repeated seed, an unknown key, values of the wrong type.
	f.Add([]byte("dynamic:\n  seeds: [1, 1]\n"))
	f.Add([]byte("retrieval:\n  kk: 3\n"))
	f.Add([]byte("retrieval:\n  k: 10.7\n"))
	f.Add([]byte("retrieval:\n  k: true\n"))
	f.Add([]byte("dynamic:\n  seeds: 3\n"))
	f.Add([]byte("dynamic:\n  steps: 1e4\n  seeds: [\"1\"]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzcount.Tick("FuzzLoadConfig")
		p := filepath.Join(t.TempDir(), "c.yaml")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := LoadConfig(viper.New(), []string{p})
		if err != nil {
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("LoadConfig returned a configuration Validate refuses: %v", err)
		}
		if _, err := json.Marshal(cfg); err != nil {
			t.Fatalf("configuration does not encode: %v", err)
		}
	})
}
