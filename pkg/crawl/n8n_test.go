package crawl

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/rated-dev/rated/pkg/catalog"
)

func loadTestTree(t *testing.T, dir string) *Tree {
	t.Helper()
	tr, err := LoadTree(context.Background(), dir, "", DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func byID(tools []catalog.Tool) map[string]catalog.Tool {
	m := map[string]catalog.Tool{}
	for _, x := range tools {
		m[x.ID] = x
	}
	return m
}

// The expectations below were worked out by hand from testdata/n8n (see the comments there):
// the v3 entry of "chat" wins over the [1,2] entry, the @version conditions keep "archive" and
// drop "oldArchive", the trigger and hidden nodes are left out, and the malformed node is
// skipped with a warning.
func TestCrawlN8nTestdata(t *testing.T) {
	res, err := CrawlN8n([]*Tree{loadTestTree(t, "testdata/n8n")})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, x := range res.Tools {
		ids = append(ids, x.ID)
	}
	wantIDs := []string{"n8n/chat/message.send", "n8n/chat/message.delete", "n8n/chat/channel.create", "n8n/chat/channel.archive", "n8n/weather/weather"}
	if !reflect.DeepEqual(ids, wantIDs) {
		t.Fatalf("ids = %v, want %v", ids, wantIDs)
	}
	if len(res.Sources) != 1 || res.Sources[0].Package != "n8n-nodes-test" || res.Sources[0].Version != "1.2.3" {
		t.Errorf("sources = %+v", res.Sources)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "node 5 skipped") {
		t.Errorf("warnings = %v, want one naming the malformed node", res.Warnings)
	}
	m := byID(res.Tools)
	send := m["n8n/chat/message.send"]
	if send.Name != "Chat: Send a message" || send.Description != "Post a message to a channel. Consume the Chat API" {
		t.Errorf("send = %q / %q", send.Name, send.Description)
	}
	if send.Function != "message.send" || send.Package != "n8n-nodes-test" || send.Version != "1.2.3" {
		t.Errorf("send function/package = %q %q %q", send.Function, send.Package, send.Version)
	}
	wantAuth := []catalog.Credential{{Name: "chatApi", Kind: "credential", Required: true}, {Name: "chatOAuth2Api", Kind: "oauth2", Required: true}}
	if !reflect.DeepEqual(send.Auth, wantAuth) {
		t.Errorf("send auth = %+v", send.Auth)
	}
	// From the credential's test request and the node's compiled code (the regular expression
	// and the documentation link there are not endpoints).
	if !reflect.DeepEqual(send.Endpoints, []catalog.Endpoint{{URL: "https://api.chat.test/v2"}, {URL: "https://api.chat.test/v2{endpoint}"}}) {
		t.Errorf("send endpoints = %+v", send.Endpoints)
	}
	wantParams := []catalog.Parameter{{Name: "channelId", Type: "string", Description: "The channel to post to", Required: true}, {Name: "text", Type: "string", Description: "Text"}}
	if !reflect.DeepEqual(send.Parameters, wantParams) {
		t.Errorf("send params = %+v", send.Parameters)
	}
	if !reflect.DeepEqual(send.Tags, []string{"Communication", "Messaging", "Message"}) {
		t.Errorf("send tags = %v", send.Tags)
	}
	del := m["n8n/chat/message.delete"]
	if del.Description != "Delete a message. Consume the Chat API" {
		t.Errorf("delete description = %q (action is the fallback)", del.Description)
	}
	create := m["n8n/chat/channel.create"]
	wantEPs := []catalog.Endpoint{{URL: "https://api.chat.test/v2"}, {URL: "https://api.chat.test/v2{endpoint}"}, {URL: "https://{workspace}.chat.test", Templated: true}, {URL: "{credentials.workspaceUrl}/api", Templated: true}}
	if !reflect.DeepEqual(create.Endpoints, wantEPs) {
		t.Errorf("create endpoints = %+v", create.Endpoints)
	}
	if len(create.Auth) != 3 || create.Auth[0] != (catalog.Credential{Name: "chatAdminApi", Kind: "credential"}) {
		t.Errorf("create auth = %+v", create.Auth)
	}
	w := m["n8n/weather/weather"]
	if w.Name != "Weather" || w.Description != "Get the weather" || w.Function != "" || len(w.Auth) != 0 ||
		!reflect.DeepEqual(w.Endpoints, []catalog.Endpoint{{URL: "https://api.weather.test/v1"}}) {
		t.Errorf("weather = %+v", w)
	}
}

func TestCrawlN8nNeedsBuiltTypes(t *testing.T) {
	_, err := CrawlN8n([]*Tree{{Label: "src", Files: map[string][]byte{"packages/nodes-base/nodes/A/A.node.ts": []byte("x")}}})
	if err == nil || !strings.Contains(err.Error(), "dist/types/nodes.json") {
		t.Fatalf("err = %v", err)
	}
}

func TestVersionMatches(t *testing.T) {
	cases := []struct {
		cond string
		v    float64
		want bool
	}{
		{`2`, 2, true}, {`2`, 2.1, false},
		{`{"_cnd": {"gte": 1.1}}`, 1.1, true}, {`{"_cnd": {"gte": 1.1}}`, 1, false},
		{`{"_cnd": {"lt": 2.5}}`, 2.4, true}, {`{"_cnd": {"lt": 2.5}}`, 2.5, false},
		{`{"_cnd": {"between": {"from": 1, "to": 2}}}`, 1.5, true}, {`{"_cnd": {"between": {"from": 1, "to": 2}}}`, 3, false},
		{`"x"`, 1, false},
	}
	for _, c := range cases {
		if got := versionMatches([]byte(c.cond), c.v); got != c.want {
			t.Errorf("versionMatches(%s, %v) = %v", c.cond, c.v, got)
		}
	}
}
