// Package provenance records what produced an output: the rated build (module version and VCS
// commit), the asset home, the retriever and the encoder with the digests of its files. Every
// result file (config.yaml, table JSON) carries a Record, so a figure can be traced to the exact
// code and model that made it. It imports nothing of rated's.
package provenance

import (
	"bytes"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"

	"gopkg.in/yaml.v3"
)

// Build identifies the rated binary.
type Build struct {
	// Module is the main module path (github.com/rated-dev/rated).
	Module string `json:"module,omitempty" yaml:"module,omitempty"`
	// Version is the module version: a tag for `go install …@vX`, "(devel)" for a local build.
	Version string `json:"version" yaml:"version"`
	// Commit is the VCS revision stamped by `go build`, or the revision of a pseudo-version;
	// "" when the build carries neither (always written, so its absence is visible).
	Commit string `json:"commit" yaml:"commit"`
	// CommitTime is the revision's commit time (RFC 3339).
	CommitTime string `json:"commit_time,omitempty" yaml:"commit_time,omitempty"`
	// Modified says the checkout had uncommitted changes when built.
	Modified bool `json:"modified,omitempty" yaml:"modified,omitempty"`
	// GoVersion is the toolchain that built the binary.
	GoVersion string `json:"go_version" yaml:"go_version"`
}

// Current reads the running binary's build information (debug.ReadBuildInfo). A binary built
// without module support reports version "unknown".
func Current() Build {
	b := Build{Version: "unknown", GoVersion: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	return FromBuildInfo(info)
}

// FromBuildInfo extracts a Build from Go's build information.
func FromBuildInfo(info *debug.BuildInfo) Build {
	b := Build{Module: info.Main.Path, Version: info.Main.Version, GoVersion: info.GoVersion}
	if b.Version == "" {
		b.Version = "unknown"
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.CommitTime = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	// `go install …@<commit>` or @latest without a tag builds from a module zip, which carries no
	// VCS stamp; its pseudo-version ends in the commit's 12-hex prefix.
	if m := pseudoVersionRev.FindStringSubmatch(b.Version); b.Commit == "" && m != nil {
		b.Commit = m[1]
	}
	return b
}

// pseudoVersionRev matches the revision of a Go pseudo-version (v0.0.0-20240102150405-abcdef123456).
var pseudoVersionRev = regexp.MustCompile(`[.-]\d{14}-([0-9a-f]{12})(?:\+incompatible)?$`)

// String is the one-line form `rated --version` prints: "rated VERSION (commit C[, modified], GO)".
func (b Build) String() string {
	s := "rated " + b.Version
	commit := b.Commit
	if commit == "" {
		commit = "unknown"
	} else if len(commit) > 12 {
		commit = commit[:12]
	}
	s += " (commit " + commit
	if b.Modified {
		s += ", modified"
	}
	if b.CommitTime != "" {
		s += ", " + b.CommitTime
	}
	return s + ", " + b.GoVersion + ")"
}

// Encoder identifies the encoder behind a dense retriever.
type Encoder struct {
	// Name is the model name (rated.yaml name) or "endpoint:<model>".
	Name string `json:"name" yaml:"name"`
	// Dir is the model folder (ONNX encoders).
	Dir string `json:"dir,omitempty" yaml:"dir,omitempty"`
	// URL is the embeddings endpoint (API encoders).
	URL string `json:"url,omitempty" yaml:"url,omitempty"`
	// ModelSHA256 lists the sha256 of the ONNX files, query tower first (one entry for a shared
	// model).
	ModelSHA256 []string `json:"model_sha256,omitempty" yaml:"model_sha256,omitempty"`
	// TokenizerSHA256 is the sha256 of the tokenizer.json.
	TokenizerSHA256 string `json:"tokenizer_sha256,omitempty" yaml:"tokenizer_sha256,omitempty"`
	// Settings are the encoding settings that change the vectors (pooling, max length, prefixes).
	Settings string `json:"settings,omitempty" yaml:"settings,omitempty"`
}

// Identified is implemented by encoders (and retrievers wrapping one) that can say what they are.
type Identified interface {
	EncoderIdentity() Encoder
}

// EncoderOf returns the identity of v when it implements Identified, else nil.
func EncoderOf(v any) *Encoder {
	if id, ok := v.(Identified); ok {
		e := id.EncoderIdentity()
		return &e
	}
	return nil
}

// Record is the provenance block written into every output.
type Record struct {
	Rated Build `json:"rated" yaml:"rated"`
	// Home is the asset home the run read its models and libraries from.
	Home string `json:"home,omitempty" yaml:"home,omitempty"`
	// Retriever is the retriever actually used (its display name).
	Retriever string `json:"retriever,omitempty" yaml:"retriever,omitempty"`
	// Encoder is the encoder actually used (nil for a lexical retriever).
	Encoder *Encoder `json:"encoder,omitempty" yaml:"encoder,omitempty"`
	// ONNXRuntime is the ONNX Runtime library and its version, when one was loaded.
	ONNXRuntime string `json:"onnxruntime,omitempty" yaml:"onnxruntime,omitempty"`
}

// YAMLComment renders r as a YAML comment block ("# " before each line of its YAML form), for the
// head of a configuration file that must stay loadable as it is: the record is kept beside the
// settings without becoming a setting. Stripping the "# " gives the record back as YAML.
func YAMLComment(r Record) ([]byte, error) {
	y, err := yaml.Marshal(struct {
		Provenance Record `yaml:"provenance"`
	}{r})
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString("# What this run actually used (a comment, so the file stays loadable with --config):\n")
	for _, line := range strings.Split(strings.TrimRight(string(y), "\n"), "\n") {
		b.WriteString("# " + line + "\n")
	}
	return b.Bytes(), nil
}
