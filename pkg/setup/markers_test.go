package setup

import (
	"regexp"
	"slices"
	"testing"

	"github.com/rated-dev/rated/configs"
)

// TestLLMMarkersAreTheWeightsStamps: the llm part was reported installed once Ollama's binary
// was built, before any weights; its markers are the stamps scripts/lib/llm.sh writes after a
// GGUF's sha256 checked, for the GGUFs the shipped configurations name (configs/llm.yaml and
// the EcoAgent generator's).
func TestLLMMarkersAreTheWeightsStamps(t *testing.T) {
	gguf := regexp.MustCompile(`(?m)^gguf: (\S+)$`)
	var llm Part
	for _, p := range Parts() {
		if p.Name == "llm" {
			llm = p
		}
	}
	for _, f := range []string{"llm.yaml", "llm-candidates/qwen2.5-coder-1.5b.yaml"} {
		data, err := configs.Files.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m := gguf.FindSubmatch(data)
		if m == nil {
			t.Fatalf("%s names no gguf", f)
		}
		if stamp := string(m[1]) + ".sha256"; !slices.Contains(llm.Markers, stamp) {
			t.Errorf("llm markers %v lack %s (the stamp of configs/%s's weights)", llm.Markers, stamp, f)
		}
	}
}
