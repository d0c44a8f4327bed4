package catalog

import (
	"net/url"
	"strings"
)

// ProviderKey names the provider a tool depends on, for failures that take several tools down
// at once: the host of its first endpoint that names one ("host:api.github.com"); for an n8n
// tool without such an endpoint, its node ("n8n-node:mysql" for the crawler's
// "n8n/mysql/executequery", "n8n-node:n8n-nodes-base/mysql" for the embedded default's
// "n8n/n8n-nodes-base/mysql:-execute-sql"); otherwise the tool itself ("tool:<id>"), a provider
// of its own.
//
// An endpoint whose host is a placeholder as a whole ("{credentials.url}", "{store}": a
// self-hosted service the user configures) names no provider: the services behind it are
// unrelated. A placeholder label keeps its host ("{shop}.myshopify.com" is Shopify); a
// placeholder glued after the host ("https://www.googleapis.com{resource}") is not part of it;
// ports and user info are dropped.
func ProviderKey(t *Tool) string {
	for _, e := range t.Endpoints {
		if h := endpointHost(e.URL); h != "" {
			return "host:" + h
		}
	}
	if node := n8nNode(t); node != "" {
		return "n8n-node:" + node
	}
	return "tool:" + t.ID
}

// endpointHost is the lower-cased host of an endpoint URL (the scheme optional), placeholders
// kept where they are labels of it, or "" when it names no provider.
func endpointHost(raw string) string {
	if !strings.Contains(raw, "://") {
		raw = "https://" + raw
	}
	if u, err := url.Parse(raw); err == nil && u.Host != "" && !strings.ContainsAny(u.Host, "{}") {
		h := u.Hostname()
		if strings.HasPrefix(u.Host, "[") { // an IPv6 literal
			return strings.ToLower(h)
		}
		return checkedHost(h)
	}
	// Templated hosts do not parse as URLs: take the text between the scheme and the first
	// slash, less user info, a placeholder glued to the end of the host, and the port.
	rest := raw[strings.Index(raw, "://")+3:]
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		rest = rest[i+1:]
	}
	if i := strings.Index(rest, "{"); i > 0 && rest[i-1] != '.' {
		rest = rest[:i]
	}
	if i := strings.LastIndex(rest, ":"); i >= 0 && !strings.Contains(rest[i:], "}") {
		rest = rest[:i]
	}
	return checkedHost(rest)
}

// checkedHost is host lower-cased, or "" when it is no host: a character a host name or a
// placeholder label cannot hold (a quote, a space, a backtick: an expression), unbalanced
// braces, or nothing outside placeholders.
func checkedHost(host string) string {
	literal := 0 // characters outside placeholders
	depth := 0
	for _, r := range host {
		switch {
		case r == '{':
			depth++
		case r == '}':
			depth--
		case !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' || depth > 0 && r == '$'):
			return "" // an expression, not a host (a quote, a space, a backtick)
		case depth == 0 && r != '.' && r != '-':
			literal++
		}
		if depth < 0 {
			return ""
		}
	}
	if depth != 0 || literal == 0 {
		return "" // unbalanced, or a placeholder as a whole
	}
	return strings.ToLower(host)
}

// n8nNode is the node of an n8n tool id, or "": the crawler's ids are n8n/<node>/<operation>;
// the embedded default's are n8n/<package>/<node>:<operation> (the package may be scoped:
// "@n8n/n8n-nodes-langchain") or n8n/<package>/<node>.
func n8nNode(t *Tool) string {
	if t.Platform != "n8n" || !strings.HasPrefix(t.ID, "n8n/") {
		return ""
	}
	rest := t.ID[len("n8n/"):]
	i := strings.LastIndex(rest, "/")
	if i <= 0 {
		return ""
	}
	pkg, node := rest[:i], rest[i+1:]
	if j := strings.Index(node, ":"); j > 0 {
		return pkg + "/" + node[:j]
	}
	if !strings.Contains(pkg, "/") && !strings.Contains(pkg, "n8n-nodes") {
		return pkg // the crawler's n8n/<node>/<operation>
	}
	return pkg + "/" + node
}
