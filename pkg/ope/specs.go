package ope

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"gopkg.in/yaml.v3"

	"github.com/rated-dev/rated/configs"
	"github.com/rated-dev/rated/pkg/bandit"
)

// Recommended names the recommended policy (bandit.RecommendedSpec) in LoadSpecs.
const Recommended = "recommended"

// LoadSpecs reads the target policies named by arg: "recommended", or a YAML file holding one
// spec, a list of specs, or a configuration with a `policies:` list (configs/paper.yaml).
// Simulator oracles in a configuration are skipped (they cannot run on a log) and listed.
func LoadSpecs(arg string) (specs []bandit.Spec, skipped []string, err error) {
	if arg == Recommended {
		s, err := bandit.RecommendedSpec()
		return []bandit.Spec{s}, nil, err
	}
	raw, err := configs.ReadFile(arg)
	if err != nil {
		return nil, nil, fmt.Errorf("--policies: %w", err)
	}
	return ParseSpecs(raw, arg)
}

// ParseSpecs is LoadSpecs on a file's bytes; name is used in errors.
func ParseSpecs(raw []byte, name string) (specs []bandit.Spec, skipped []string, err error) {
	var node yaml.Node
	if err := yaml.Unmarshal(raw, &node); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(node.Content) == 0 {
		return nil, nil, fmt.Errorf("%s: no policy spec", name)
	}
	// Each spec is decoded alone below: an alias (paper.yaml's *kernel) would lose its anchor.
	budget := maxInlinedNodes
	if !inlineAliases(&node, 0, &budget) {
		return nil, nil, fmt.Errorf("%s: its aliases expand to more than %d nodes (nested aliases multiply; a policy file needs a few hundred)", name, maxInlinedNodes)
	}
	doc := node.Content[0]
	key := ""
	if doc.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(doc.Content); i += 2 {
			if doc.Content[i].Value == "policies" {
				doc, key = doc.Content[i+1], "policies"
				break
			}
		}
	}
	decode := func(n *yaml.Node, at string) (bandit.Spec, error) {
		var s bandit.Spec
		out, err := yaml.Marshal(n)
		if err != nil {
			return s, err
		}
		dec := yaml.NewDecoder(bytes.NewReader(out))
		dec.KnownFields(true)
		if err := dec.Decode(&s); err != nil && !errors.Is(err, io.EOF) {
			return s, fmt.Errorf("%s: %s (line %d): %w", name, at, n.Line, err)
		}
		return s, nil
	}
	switch doc.Kind {
	case yaml.MappingNode:
		if key != "" {
			return nil, nil, fmt.Errorf("%s: policies must be a list", name)
		}
		s, err := decode(doc, "spec")
		if err != nil {
			return nil, nil, err
		}
		specs = append(specs, s)
	case yaml.SequenceNode:
		if key == "" {
			key = "policies"
		}
		for i, n := range doc.Content {
			s, err := decode(n, fmt.Sprintf("%s[%d]", key, i))
			if err != nil {
				return nil, nil, err
			}
			if bandit.IsOracle(s.Kind) {
				skipped = append(skipped, s.Name)
				continue
			}
			specs = append(specs, s)
		}
	default:
		return nil, nil, fmt.Errorf("%s: a policy spec, a list of them or a configuration with policies: is expected", name)
	}
	for i, s := range specs {
		if err := s.Validate(fmt.Sprintf("%s: policies[%d]", name, i)); err != nil {
			return nil, nil, err
		}
	}
	if len(specs) == 0 {
		return nil, skipped, fmt.Errorf("%s: no policy that can run on a log", name)
	}
	return specs, skipped, nil
}

// maxInlinedNodes bounds the nodes alias inlining may visit: depth alone does not bound a
// "billion laughs" (ten aliases per level multiply by ten each level: 343 bytes took 1.1 GB).
const maxInlinedNodes = 100_000

// inlineAliases replaces every alias node under n with a copy of the node it refers to, so that
// any part of the document decodes alone. It reports false when the copies would pass budget
// nodes (or a depth of 64).
func inlineAliases(n *yaml.Node, depth int, budget *int) bool {
	*budget--
	if depth > 64 || *budget < 0 {
		return false
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		line, col := n.Line, n.Column
		*n = *n.Alias
		n.Anchor, n.Line, n.Column = "", line, col
		n.Content = append([]*yaml.Node(nil), n.Content...)
		for i, c := range n.Content {
			cp := *c
			n.Content[i] = &cp
		}
	}
	for _, c := range n.Content {
		if !inlineAliases(c, depth+1, budget) {
			return false
		}
	}
	return true
}
