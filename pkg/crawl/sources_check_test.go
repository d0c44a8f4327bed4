package crawl

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRepeatedPlatformIsCrawledOnce: --platform crewai,crewai crawled (and counted) crewai twice.
func TestRepeatedPlatformIsCrawledOnce(t *testing.T) {
	if got := (Options{Platforms: []string{"crewai", "n8n", "crewai"}}).platforms(); !slices.Equal(got, []string{"crewai", "n8n"}) {
		t.Fatalf("platforms %v, want [crewai n8n]", got)
	}
}

// TestCheckSourceRefusesWhatLoadTreeCannotRead: a revision on a worktree or an archive was
// ignored (the checked-out files were crawled); a file of another kind was refused only when its
// platform's turn came, after earlier platforms had been crawled. Both are refused by Check,
// before anything is read.
func TestCheckSourceRefusesWhatLoadTreeCannotRead(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	os.MkdirAll(work, 0o755)
	run("init", "-q")
	os.WriteFile(filepath.Join(work, "a.py"), []byte("x = 1\n"), 0o644)
	run("add", "a.py")
	run("commit", "-qm", "one")
	archive := filepath.Join(dir, "pkg.tgz")
	os.WriteFile(archive, []byte("x"), 0o644)
	other := filepath.Join(dir, "pkg.rar")
	os.WriteFile(other, []byte("x"), 0o644)
	for _, c := range []struct {
		path, rev, want string
	}{
		{work, "HEAD~0", "give " + filepath.Join(work, ".git") + "@HEAD~0"},
		{archive, "v1", "a revision (@v1) needs a bare git directory"},
		{other, "", "not a directory, bare git directory, .whl/.zip or .tgz/.tar.gz/.tar archive"},
	} {
		err := Options{Platforms: []string{"langchain"}, Local: map[string][]LocalSource{"langchain": {{Path: c.path, Rev: c.rev}}}}.Check()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s@%s: %v, want %q", c.path, c.rev, err, c.want)
		}
	}
	for _, ok := range []LocalSource{{Path: work}, {Path: filepath.Join(work, ".git"), Rev: "HEAD"}, {Path: archive}} {
		if err := CheckSource(ok.Path, ok.Rev); err != nil {
			t.Errorf("%s@%s: %v", ok.Path, ok.Rev, err)
		}
	}
}

// TestN8nConditionalURLGivesItsBranches: the AWS credential's test URL is a JS conditional; it
// was stored whole as one endpoint on 80 tools. Each branch's URL is an endpoint instead.
func TestN8nConditionalURLGivesItsBranches(t *testing.T) {
	raw := "={{$credentials.region.startsWith(\"cn-\") ? `https://sts.${$credentials.region}.amazonaws.com.cn` : `https://sts.${$credentials.region}.amazonaws.com`}}"
	var got []string
	for _, ep := range n8nURLs(raw) {
		got = append(got, ep.URL)
	}
	want := []string{"https://sts.{credentials.region}.amazonaws.com.cn", "https://sts.{credentials.region}.amazonaws.com"}
	if !slices.Equal(got, want) {
		t.Fatalf("endpoints %q, want %q", got, want)
	}
	if eps := n8nURLs("={{$credentials.useSsl ? 'on' : 'off'}}"); len(eps) != 0 {
		t.Errorf("a conditional without URLs gave endpoints %v", eps)
	}
	if eps := n8nURLs("=https://api.acme.io/{{$credentials.version}}"); len(eps) != 1 || eps[0].URL != "https://api.acme.io/{credentials.version}" {
		t.Errorf("a plain expression URL: %v", eps)
	}
}

// TestNodeTestFilesAreNotCode: Spotify's __tests__ fixtures gave each Spotify tool 26 mocked
// album and track URLs as endpoints.
func TestNodeTestFilesAreNotCode(t *testing.T) {
	for p, want := range map[string]bool{
		"package/dist/nodes/Spotify/Spotify.node.js":                    false,
		"package/dist/nodes/Spotify/__tests__/workflow/apiResponses.js": true,
		"package/dist/nodes/Slack/test/v2/node/channel/create.test.js":  true,
		"package/dist/nodes/Github/GenericFunctions.js":                 false,
		"package/dist/nodes/Foo/__mocks__/client.js":                    true,
		"package/dist/nodes/Bar/Bar.node.spec.js":                       true,
		"package/dist/nodes/Testing/Testing.node.js":                    false,
	} {
		if got := testCode(p); got != want {
			t.Errorf("testCode(%s) = %v, want %v", p, got, want)
		}
	}
}

// TestSecretParamsAreCredentials: max_tokens made the Vectara tools list an api_key
// credential named max_tokens.
func TestSecretParamsAreCredentials(t *testing.T) {
	for name, want := range map[string]bool{"api_key": true, "vectara_api_key": true, "access_token": true, "token": true, "client_secret": true,
		"auth_header": true, "max_tokens": false, "num_tokens": false, "tokens": false, "tokenizer": false, "author": false, "top_k": false} {
		if got := isSecretParam(name); got != want {
			t.Errorf("isSecretParam(%q) = %v, want %v", name, got, want)
		}
	}
}
