// Package catalog owns the Tool record that every stage of rated passes along, its JSONL
// encoding, and the static metadata prior of the RATED paper.
package catalog

import (
	"fmt"
	"strings"
	"time"
)

// Platform names used in Tool.Platform. Other values are allowed and get the "other" source weight.
const (
	PlatformLangChain  = "langchain"
	PlatformCrewAI     = "crewai"
	PlatformLlamaIndex = "llamaindex"
	PlatformN8n        = "n8n"
)

// Tool is one retrievable tool of a catalog. IDs are stable across crawls of the same source:
// platform/package-or-node/name, because names alone collide across platforms and packages.
type Tool struct {
	ID          string       `json:"id"`
	Name        string       `json:"name"`
	Description string       `json:"description"`
	Platform    string       `json:"platform"`
	Package     string       `json:"package,omitempty"`
	Version     string       `json:"version,omitempty"`
	SourceFile  string       `json:"source_file,omitempty"`
	Official    bool         `json:"official,omitempty"`
	Function    string       `json:"function,omitempty"`
	Endpoints   []Endpoint   `json:"endpoints,omitempty"`
	Auth        []Credential `json:"auth,omitempty"`
	Parameters  []Parameter  `json:"parameters,omitempty"`
	Tags        []string     `json:"tags,omitempty"`
	// RuntimeOnly lists fields (for example "description") whose value is only known when the
	// tool's code runs; the crawler records that instead of inventing text.
	RuntimeOnly []string     `json:"runtime_only,omitempty"`
	Probe       *ProbeResult `json:"probe,omitempty"`
	Prior       *PriorScore  `json:"prior,omitempty"`
	// AddedAt is the evaluation step from which the tool exists; 0 means from the start. Used by
	// cold-start scenarios.
	AddedAt int `json:"added_at,omitempty"`
}

// Endpoint is a URL a tool calls. Templated hosts (for example https://{instance}.atlassian.net)
// cannot be probed as they stand and are marked so.
type Endpoint struct {
	URL       string `json:"url"`
	Templated bool   `json:"templated,omitempty"`
}

// Credential is one authentication requirement: an environment variable, an n8n credential type
// or an API-key parameter.
type Credential struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"` // "env", "credential", "api_key", "oauth2"
	Required bool   `json:"required"`
}

// Parameter is one argument of a tool, as far as the catalog declares it.
type Parameter struct {
	Name        string `json:"name"`
	Type        string `json:"type,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// Probe status classes recorded by `rated crawl --probe`.
const (
	ProbeReachable   = "reachable"
	ProbeNeedsAuth   = "needs_auth"
	ProbeBroken      = "broken"
	ProbeServerError = "server_error"
	ProbeTimeout     = "timeout"
	ProbeNoEndpoint  = "no_endpoint"
	ProbeTemplated   = "templated"
)

// ProbeResult is the outcome of the last health check of a tool's endpoints.
type ProbeResult struct {
	Status    string    `json:"status"`
	URL       string    `json:"url,omitempty"`
	HTTPCode  int       `json:"http_code,omitempty"`
	Error     string    `json:"error,omitempty"`
	LatencyMS float64   `json:"latency_ms,omitempty"`
	CheckedAt time.Time `json:"checked_at"`
}

// PriorScore is the static metadata prior r_static with its three parts, kept so a reader can see
// why a tool scored what it did.
type PriorScore struct {
	Value             float64 `json:"value"`
	Consistency       float64 `json:"consistency"`
	ConsistencyMethod string  `json:"consistency_method"`
	SourceWeight      float64 `json:"source_weight"`
	Quality           float64 `json:"quality"`
}

// Validate reports the first missing required field.
func (t *Tool) Validate() error {
	switch {
	case strings.TrimSpace(t.ID) == "":
		return fmt.Errorf("tool has no id")
	case strings.TrimSpace(t.Name) == "":
		return fmt.Errorf("tool %s has no name", t.ID)
	case strings.TrimSpace(t.Platform) == "":
		return fmt.Errorf("tool %s has no platform", t.ID)
	}
	return nil
}

// Text is the document the retrievers index for a tool: its name and description.
func (t *Tool) Text() string {
	if t.Description == "" {
		return t.Name
	}
	return t.Name + ": " + t.Description
}

// MakeID builds a stable tool id from its parts, lower-cased, with spaces replaced by '-'.
func MakeID(platform, pkg, name string) string {
	clean := func(s string) string {
		return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), " ", "-")
	}
	return clean(platform) + "/" + clean(pkg) + "/" + clean(name)
}
