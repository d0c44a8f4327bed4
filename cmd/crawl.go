package cmd

import (
	"fmt"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/rated-dev/rated/internal/progress"
	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/crawl"
	"github.com/rated-dev/rated/pkg/encode"
	"github.com/rated-dev/rated/pkg/retrieve"
)

// newCrawlCmd builds `rated crawl`: crawl the platform catalogs into a catalog JSONL.
func newCrawlCmd() *cobra.Command {
	var (
		out, config, statsOut     string
		encoderDir                string
		platforms, sources        []string
		latest, probe             bool
		concurrency, retries      int
		perHost, timeout, backoff time.Duration
		maxWarnings               int
		encFlags                  encodingFlags
	)
	cmd := &cobra.Command{
		Use:   "crawl",
		Short: "Crawl the LangChain, CrewAI, LlamaIndex and n8n tool catalogs (statically) into a catalog JSONL",
		Long: `Reads the published tool catalogs without executing any crawled code: the pinned registry
packages of configs/sources.yaml (embedded; downloaded once into <asset home>/sources/ by
"rated setup sources", or on first use with npm pack and pip download), or local archives, source trees and bare git directories given with --source.
Computes the metadata prior (0.5/0.3/0.2), optionally health-checks every endpoint (--probe:
this sends requests to the real services; use it deliberately), writes the catalog atomically
and prints per platform the tools found, the share with an endpoint, the share needing auth and,
after probing, the share broken or lacking authentication, as a table and as JSON.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			switch {
			case concurrency < 1:
				return fmt.Errorf("--probe-concurrency %d: must be at least 1", concurrency)
			case retries < 0:
				return fmt.Errorf("--probe-retries %d: must be >= 0", retries)
			case maxWarnings < 0:
				return fmt.Errorf("--max-warnings %d: must be >= 0", maxWarnings)
			case timeout <= 0:
				return fmt.Errorf("--probe-timeout %v: must be positive", timeout)
			case backoff <= 0:
				return fmt.Errorf("--probe-backoff %v: must be positive", backoff)
			case perHost < 0:
				return fmt.Errorf("--probe-host-interval %v: must be >= 0 (0: no interval)", perHost)
			}
			h, err := assetHome(c)
			if err != nil {
				return err
			}
			local := map[string][]crawl.LocalSource{}
			for _, s := range sources {
				plat, ls, err := crawl.ParseLocalSource(s)
				if err != nil {
					return err
				}
				local[plat] = append(local[plat], ls)
			}
			var cfg *crawl.SourcesConfig
			if len(local) < len(crawl.Platforms) || len(platforms) > 0 {
				if cfg, err = loadSources(config); err != nil {
					return err
				}
			}
			prog := progress.ForWriter(c.ErrOrStderr(), time.Now)
			ro := crawl.RunOptions{
				Options: crawl.Options{
					Platforms: platforms,
					Config:    cfg,
					Local:     local,
					Fetcher:   &crawl.Fetcher{Dir: h.SourcesDir()},
					Latest:    latest,
					Progress:  prog,
				},
				Out:         out,
				Prior:       catalog.PaperPriorConfig(),
				StatsOut:    statsOut,
				Provenance:  runRecord(h),
				Stdout:      c.OutOrStdout(),
				Stderr:      c.ErrOrStderr(),
				MaxWarnings: maxWarnings,
			}
			if encoderDir != "" {
				opts, err := encFlags.apply(encode.Options{CacheDir: h.EmbeddingCache()})
				if err != nil {
					return fmt.Errorf("crawl: %w", err)
				}
				enc, err := encoderSource(h, opts).Open(encoderDir)
				if err != nil {
					return fmt.Errorf("crawl: --encoder: %w", err)
				}
				defer enc.Close()
				ro.Similarity = retrieve.EncoderSimilarity{Encoder: enc}
			}
			if probe {
				ro.Prober = &crawl.Prober{
					Now:             time.Now,
					Client:          &http.Client{Timeout: timeout + time.Second},
					Concurrency:     concurrency,
					PerHostInterval: perHost,
					Timeout:         timeout,
					Retries:         retries,
					Backoff:         backoff,
					Progress:        prog,
				}
			}
			_, err = crawl.Run(c.Context(), ro)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "data/catalog.jsonl", "catalog JSONL to write (atomically)")
	f.StringVar(&config, "config", "", "pinned sources (default: configs/sources.yaml, embedded in the binary)")
	f.StringVar(&statsOut, "stats-out", "", "also write the per-platform stats JSON to this file")
	f.StringSliceVar(&platforms, "platform", nil, "platforms to crawl (default all: n8n, langchain, crewai, llamaindex)")
	f.StringArrayVar(&sources, "source", nil, "PLATFORM=PATH[@REV]: crawl a local archive, tree or bare git directory instead of the pinned packages (repeatable)")
	f.BoolVar(&latest, "latest", false, "ask the registries for the newest versions instead of the pinned ones")
	f.BoolVar(&probe, "probe", false, "health-check every endpoint (sends requests to the real services)")
	f.IntVar(&concurrency, "probe-concurrency", 8, "probe requests in flight")
	f.DurationVar(&perHost, "probe-host-interval", time.Second, "minimum time between probe requests to one host")
	f.DurationVar(&timeout, "probe-timeout", 10*time.Second, "timeout of one probe request")
	f.IntVar(&retries, "probe-retries", 2, "extra attempts after a timeout, 5xx, 429 or reset")
	f.DurationVar(&backoff, "probe-backoff", 500*time.Millisecond, "first retry wait (doubles each retry)")
	f.StringVar(&encoderDir, "encoder", "", "encoder for the prior's name–description consistency: an installed model folder name, a folder path, or openai:URL[#MODEL] (default: the lexical measure)")
	f.IntVar(&maxWarnings, "max-warnings", 30, "warnings printed (0: none; all are counted in the stats)")
	encFlags.register(f)
	return cmd
}
