package bandit

import (
	"bytes"
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/rated-dev/rated/configs"
)

// RecommendedSpec returns the recommended policy for agents, configs/recommended.yaml (embedded
// in the binary): the default of the run-time router and a row of every Table 2.
func RecommendedSpec() (Spec, error) {
	raw, err := configs.Files.ReadFile("recommended.yaml")
	if err != nil {
		return Spec{}, err
	}
	var s Spec
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		return Spec{}, fmt.Errorf("embedded configs/recommended.yaml: %w", err)
	}
	if err := s.Validate("configs/recommended.yaml"); err != nil {
		return Spec{}, err
	}
	return s, nil
}
