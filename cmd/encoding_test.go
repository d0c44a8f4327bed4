package cmd

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/rated-dev/rated/pkg/encode"
)

// TestEncodingFlags checks the encoder flags of every encoding command: defaults, values passed
// through to encode.Options, and refusal of impossible values naming the flag.
func TestEncodingFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // error text; "" = accepted
	}{
		{nil, ""},
		{[]string{"--threads", "1", "--batch-tokens", "512", "--batch-size", "8"}, ""},
		{[]string{"--threads", "-1"}, "--threads"},
		{[]string{"--batch-tokens", "0"}, "--batch-tokens"},
		{[]string{"--batch-size", "0"}, "--batch-size"},
	} {
		cmd := newEvalOfflineCmd()
		if err := cmd.ParseFlags(c.args); err != nil {
			t.Fatal(err)
		}
		var e encodingFlags
		e.threads, _ = cmd.Flags().GetInt("threads")
		e.batchTokens, _ = cmd.Flags().GetInt("batch-tokens")
		e.batchSize, _ = cmd.Flags().GetInt("batch-size")
		opts, err := e.apply(encode.Options{})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.args, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: error %v, want one naming %s", c.args, err, c.want)
		case c.want == "" && c.args == nil && (opts.BatchTokens != encode.DefaultBatchTokens || opts.BatchSize != encode.DefaultBatchSize || opts.Threads != 0):
			t.Errorf("defaults %+v", opts)
		case c.want == "" && c.args != nil && (opts.Threads != 1 || opts.BatchTokens != 512 || opts.BatchSize != 8):
			t.Errorf("%v: options %+v", c.args, opts)
		}
	}
	// Every command that encodes has the three flags.
	info, _, err := newModelCmd().Find([]string{"info"})
	if err != nil {
		t.Fatal(err)
	}
	for name, fs := range map[string]*pflag.FlagSet{
		"eval offline": newEvalOfflineCmd().Flags(), "eval dynamic": newEvalDynamicCmd().Flags(),
		"eval latency": newEvalLatencyCmd().Flags(), "reproduce": newReproduceCmd().Flags(),
		"crawl": newCrawlCmd().Flags(), "build-bench": newBuildBenchCmd().Flags(), "model info": info.Flags(),
	} {
		for _, flag := range []string{"threads", "batch-tokens", "batch-size"} {
			if fs.Lookup(flag) == nil {
				t.Errorf("%s has no --%s", name, flag)
			}
		}
	}
}
