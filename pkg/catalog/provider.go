package catalog

import (
	"net/url"
	"strings"
)

// ProviderKey names the provider a tool depends on, for failures that take several tools down
// at once: the host of its first endpoint ("host:api.github.com"); for an n8n tool without an
// endpoint, its node ("n8n-node:n8n-nodes-base/mysql" for ".../mysql:-execute-sql"); otherwise
// the tool itself ("tool:<id>"), a provider of its own.
func ProviderKey(t *Tool) string {
	for _, e := range t.Endpoints {
		raw := e.URL
		if !strings.Contains(raw, "://") {
			raw = "https://" + raw
		}
		if u, err := url.Parse(raw); err == nil && u.Host != "" {
			return "host:" + strings.ToLower(u.Hostname())
		}
		// Templated hosts ("https://{resource}.example.com/...") do not parse as URLs: take the
		// text between the scheme and the first slash.
		rest := raw[strings.Index(raw, "://")+3:]
		if i := strings.IndexAny(rest, "/?#"); i >= 0 {
			rest = rest[:i]
		}
		if rest != "" {
			return "host:" + strings.ToLower(rest)
		}
	}
	if t.Platform == "n8n" && strings.HasPrefix(t.ID, "n8n/") {
		if i := strings.LastIndex(t.ID, "/"); i > len("n8n/") {
			node := t.ID[i+1:]
			if j := strings.Index(node, ":"); j > 0 {
				node = node[:j]
			}
			return "n8n-node:" + t.ID[len("n8n/"):i] + "/" + node
		}
	}
	return "tool:" + t.ID
}
