package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rated-dev/rated/pkg/setup"
	"github.com/rated-dev/rated/pkg/synth"
)

// newLLMCmd is `rated llm up|down|status`: the local LLM server of configs/llm.yaml, started and
// stopped by the scripts llm-up and llm-down embedded in the binary (pkg/setup), against the
// asset home that `rated setup llm` installed it into.
func newLLMCmd() *cobra.Command {
	var config string
	cmd := &cobra.Command{
		Use:   "llm",
		Short: "Start, stop or inspect the local LLM server (configs/llm.yaml) used by build-bench",
	}
	cmd.PersistentFlags().StringVar(&config, "config", "", "LLM configuration (default: configs/llm.yaml, embedded in the binary)")
	script := func(name string) func(*cobra.Command, []string) error {
		return func(c *cobra.Command, _ []string) error {
			h, err := assetHome(c)
			if err != nil {
				return err
			}
			env := os.Environ()
			if config != "" {
				abs, err := filepath.Abs(config)
				if err != nil {
					return err
				}
				env = append(env, "RATED_LLM_CONFIG="+abs)
			}
			return setup.RunScript(c.Context(), name, nil, setup.Options{Home: h.Dir, Stdout: c.OutOrStdout(), Stderr: c.ErrOrStderr(), Env: env})
		}
	}
	cmd.AddCommand(&cobra.Command{Use: "up", Short: "Start the server (idempotent) and wait until the model answers", Args: cobra.NoArgs, RunE: script("llm-up")})
	cmd.AddCommand(&cobra.Command{Use: "down", Short: "Stop the server started by `rated llm up`", Args: cobra.NoArgs, RunE: script("llm-down")})
	cmd.AddCommand(&cobra.Command{
		Use: "status", Short: "Say whether the server answers, which models it serves, and its pid", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			h, err := assetHome(c)
			if err != nil {
				return err
			}
			cfg, _, err := loadLLMConfig(config)
			if err != nil {
				return err
			}
			return llmStatus(c.Context(), c.OutOrStdout(), cfg, h.RunDir(), &http.Client{Timeout: 5 * time.Second})
		},
	})
	return cmd
}

func llmStatus(ctx context.Context, w io.Writer, cfg synth.LLMConfig, runDir string, hc *http.Client) error {
	base := cfg.ResolvedBaseURL()
	pid := "none"
	if b, err := os.ReadFile(filepath.Join(runDir, fmt.Sprintf("ollama-%d.pid", cfg.Port))); err == nil {
		pid = strings.TrimSpace(string(b))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/models", nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		fmt.Fprintf(w, "llm: not answering at %s (pid file: %s)\n", base, pid)
		return fmt.Errorf("llm server %s: %w", base, err)
	}
	defer resp.Body.Close()
	var models struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&models); err != nil {
		return fmt.Errorf("llm server %s/models: %w", base, err)
	}
	var ids []string
	for _, m := range models.Data {
		ids = append(ids, m.ID)
	}
	fmt.Fprintf(w, "llm: answering at %s (pid %s); models: %s; configured model: %s (gguf sha256 %s)\n",
		base, pid, strings.Join(ids, ", "), cfg.Model, cfg.GGUFSHA256)
	return nil
}
