package cmd

import (
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/rated-dev/rated/pkg/encode"
	"github.com/rated-dev/rated/pkg/home"
	"github.com/rated-dev/rated/pkg/provenance"
	"github.com/rated-dev/rated/pkg/retrieve"
)

// homeFlag is the root's persistent flag choosing the asset home (pkg/home).
const homeFlag = "home"

// assetHome resolves the asset home of a command: --home, RATED_HOME, RATED_ASSETS, ./.rated in
// the working directory, then $XDG_DATA_HOME/rated (pkg/home, the one resolver).
func assetHome(c *cobra.Command) (home.Home, error) {
	flag := ""
	if f := c.Flags().Lookup(homeFlag); f != nil {
		flag = f.Value.String()
	}
	return home.FromEnvironment(flag)
}

// encoderSource opens encoders for a command: model folders of the home through its ONNX Runtime
// library, paths, and openai:URL endpoints ($OPENAI_API_KEY as the bearer token). opts.Runtime
// defaults to the home's library; set opts.CacheDir to cache embeddings.
func encoderSource(h home.Home, opts encode.Options) retrieve.EncoderSource {
	if opts.Runtime == nil {
		opts.Runtime = encode.NewRuntime(h.ORTLibrary())
	}
	return retrieve.EncoderSource{ModelsDir: h.ModelsDir(), Options: opts, Missing: h.Missing,
		Client: &http.Client{Timeout: 2 * time.Minute}, APIKey: os.Getenv("OPENAI_API_KEY")}
}

// runRecord starts the provenance of an output: this binary's build and the asset home.
func runRecord(h home.Home) provenance.Record {
	return provenance.Record{Rated: provenance.Current(), Home: h.Dir}
}
