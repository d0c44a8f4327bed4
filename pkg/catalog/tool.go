// Package catalog owns the Tool record that every stage of rated passes along, its JSONL
// encoding, and the static metadata prior of the RATED paper.
package catalog

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
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
	case ValidateID(t.ID) != nil:
		return ValidateID(t.ID)
	case strings.TrimSpace(t.Name) == "":
		return fmt.Errorf("tool %s has no name", t.ID)
	case strings.TrimSpace(t.Platform) == "":
		return fmt.Errorf("tool %s has no platform", t.ID)
	}
	if err := plainText(t.Name, false); err != nil {
		return fmt.Errorf("tool %s: name: %w", t.ID, err)
	}
	if err := plainText(t.Description, true); err != nil {
		return fmt.Errorf("tool %s: description: %w", t.ID, err)
	}
	for i, e := range t.Endpoints {
		if strings.TrimSpace(e.URL) == "" {
			return fmt.Errorf("tool %s: endpoints[%d].url is empty", t.ID, i)
		}
	}
	for i, c := range t.Auth {
		if strings.TrimSpace(c.Name) == "" {
			return fmt.Errorf("tool %s: auth[%d].name is empty", t.ID, i)
		}
	}
	params := map[string]int{}
	for i, p := range t.Parameters {
		if strings.TrimSpace(p.Name) == "" {
			return fmt.Errorf("tool %s: parameters[%d].name is empty", t.ID, i)
		}
		if j, dup := params[p.Name]; dup {
			return fmt.Errorf("tool %s: parameters[%d].name %q repeats parameters[%d]", t.ID, i, p.Name, j)
		}
		params[p.Name] = i
	}
	if t.Probe != nil {
		switch t.Probe.Status {
		case ProbeReachable, ProbeNeedsAuth, ProbeBroken, ProbeServerError, ProbeTimeout, ProbeNoEndpoint, ProbeTemplated:
		default:
			return fmt.Errorf("tool %s: probe.status %q: must be one of %s, %s, %s, %s, %s, %s, %s", t.ID, t.Probe.Status,
				ProbeReachable, ProbeNeedsAuth, ProbeBroken, ProbeServerError, ProbeTimeout, ProbeNoEndpoint, ProbeTemplated)
		}
	}
	return nil
}

// plainText refuses a NUL, and in a one-line text (multiline false: a name) any control
// character or U+FFFD (a lone surrogate escape or an invalid byte that was replaced).
func plainText(s string, multiline bool) error {
	for i, r := range s {
		switch {
		case r == 0:
			return fmt.Errorf("holds a NUL at byte %d", i+1)
		case multiline:
		case unicode.IsControl(r):
			return fmt.Errorf("holds a control character (%U) at byte %d", r, i+1)
		case r == utf8.RuneError:
			return fmt.Errorf("holds U+FFFD at byte %d (an invalid byte or a lone surrogate escape was replaced)", i+1)
		}
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

// MakeID builds a stable tool id from its parts: lower-cased, white space, control characters,
// backslashes and invalid bytes each replaced by '-', and empty, "." and ".." segments dropped
// (a part that is left empty becomes "_"), so the id always passes ValidateID whatever a crawled
// source holds.
func MakeID(platform, pkg, name string) string {
	return cleanIDPart(platform) + "/" + cleanIDPart(pkg) + "/" + cleanIDPart(name)
}

func cleanIDPart(s string) string {
	s = strings.ToLower(strings.TrimSpace(strings.ToValidUTF8(s, "\uFFFD")))
	s = strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == '\\' || r == utf8.RuneError {
			return '-'
		}
		return r
	}, s)
	var segs []string
	for _, seg := range strings.Split(s, "/") {
		if seg != "" && seg != "." && seg != ".." {
			segs = append(segs, seg)
		}
	}
	if len(segs) == 0 {
		return "_"
	}
	return strings.Join(segs, "/")
}

// ValidateID refuses a tool id that is unsafe as a file name part, a TREC run column or a key:
// empty, invalid UTF-8 or U+FFFD, white space, control characters, backslashes, and empty, "."
// or ".." segments between slashes.
func ValidateID(id string) error {
	bad := func(why string) error { return fmt.Errorf("tool id %q: %s", id, why) }
	if id == "" {
		return errors.New("tool id is empty")
	}
	if !utf8.ValidString(id) {
		return bad("invalid UTF-8")
	}
	for _, r := range id {
		switch {
		case r == utf8.RuneError:
			return bad("holds U+FFFD (an invalid byte or escape was replaced)")
		case unicode.IsSpace(r):
			return bad("holds white space")
		case unicode.IsControl(r):
			return bad("holds a control character")
		case r == '\\':
			return bad("holds a backslash")
		}
	}
	for _, seg := range strings.Split(id, "/") {
		switch seg {
		case "":
			return bad("empty segment (leading, trailing or doubled '/')")
		case ".", "..":
			return bad(fmt.Sprintf("%q segment", seg))
		}
	}
	return nil
}
