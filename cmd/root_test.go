package cmd

import (
	"runtime"
	"strings"
	"testing"
)

// rated --version prints the build's module version, commit and Go version (debug.ReadBuildInfo).
func TestVersionFlag(t *testing.T) {
	stdout, _, err := runRated("--version")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stdout, "rated ") || !strings.Contains(stdout, "(commit ") || !strings.Contains(stdout, runtime.Version()+")") {
		t.Errorf("--version printed %q", stdout)
	}
}
