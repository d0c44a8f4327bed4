package provenance

import (
	"fmt"
	"runtime/debug"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestFromBuildInfo(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/rated-dev/rated", Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "28f300326991dac876e2b40acbf4efbdf8d078a9"},
			{Key: "vcs.time", Value: "2026-12-01T06:26:30Z"}, {Key: "vcs.modified", Value: "true"}}}
	b := FromBuildInfo(info)
	want := Build{Module: "github.com/rated-dev/rated", Version: "(devel)", Commit: "28f300326991dac876e2b40acbf4efbdf8d078a9",
		CommitTime: "2026-12-01T06:26:30Z", Modified: true, GoVersion: "go1.26.8"}
	if b != want {
		t.Errorf("got %+v\nwant %+v", b, want)
	}
	if s := b.String(); s != "rated (devel) (commit 28f300326991, modified, 2026-12-01T06:26:30Z, go1.26.8)" {
		t.Errorf("String() = %q", s)
	}
}

// `go install …@<commit>` gives a pseudo-version and no VCS stamp: the commit comes from it.
func TestPseudoVersionCommit(t *testing.T) {
	for v, want := range map[string]string{
		"v0.0.0-20261201062630-28f300326991":              "28f300326991",
		"v1.2.4-0.20261201062630-28f300326991":            "28f300326991",
		"v1.2.3-pre.0.20261201062630-28f300326991":        "28f300326991",
		"v2.0.0-20261201062630-28f300326991+incompatible": "28f300326991",
		"v1.2.3":      "",
		"v1.2.3-rc.1": "",
	} {
		b := FromBuildInfo(&debug.BuildInfo{Main: debug.Module{Version: v}})
		if b.Commit != want {
			t.Errorf("%s: commit %q, want %q", v, b.Commit, want)
		}
	}
}

// The config.yaml header is a comment that gives the record back once "# " is stripped.
func TestYAMLCommentRoundTrip(t *testing.T) {
	r := Record{Rated: Build{Version: "v1.0.0", Commit: "abc", GoVersion: "go1.26.8"}, Home: "/h", Retriever: "dense:m",
		Encoder: &Encoder{Name: "m", Dir: "/h/models/m", ModelSHA256: []string{"aa", "bb"}, TokenizerSHA256: "cc", Settings: `query_prefix="x: "`}}
	c, err := YAMLComment(r)
	if err != nil {
		t.Fatal(err)
	}
	var plain []string
	for _, line := range strings.Split(strings.TrimRight(string(c), "\n"), "\n")[1:] {
		if !strings.HasPrefix(line, "# ") {
			t.Fatalf("line %q is not a comment", line)
		}
		plain = append(plain, strings.TrimPrefix(line, "# "))
	}
	var back struct {
		Provenance Record `yaml:"provenance"`
	}
	if err := yaml.Unmarshal([]byte(strings.Join(plain, "\n")), &back); err != nil {
		t.Fatal(err)
	}
	if back.Provenance.Encoder == nil || back.Provenance.Encoder.Settings != r.Encoder.Settings || back.Provenance.Home != "/h" ||
		strings.Join(back.Provenance.Encoder.ModelSHA256, ",") != "aa,bb" || back.Provenance.Rated.Commit != "abc" {
		t.Errorf("round trip: %+v", back.Provenance)
	}
	// A YAML document made of comments only holds nothing.
	var v map[string]any
	if err := yaml.Unmarshal(c, &v); err != nil || len(v) != 0 {
		t.Errorf("the comment block parses as %v, %v", v, err)
	}
}

type identified struct{}

func (identified) EncoderIdentity() Encoder { return Encoder{Name: "e"} }

func TestEncoderOf(t *testing.T) {
	if e := EncoderOf(identified{}); e == nil || e.Name != "e" {
		t.Errorf("got %+v", e)
	}
	if e := EncoderOf("not an encoder"); e != nil {
		t.Errorf("got %+v", e)
	}
}

func ExampleBuild_String() {
	b := FromBuildInfo(&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/rated-dev/rated", Version: "v0.0.0-20261201062630-28f300326991"}})
	fmt.Println(b)
	// Output: rated v0.0.0-20261201062630-28f300326991 (commit 28f300326991, go1.26.8)
}
