package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/rated-dev/rated/pkg/synth"
	"github.com/spf13/cobra"
)

// newLLMCmd is `rated llm up|down|status`: the local LLM server of configs/llm.yaml, started and
// stopped by scripts/llm-up and scripts/llm-down.
func newLLMCmd() *cobra.Command {
	var repo, config string
	cmd := &cobra.Command{
		Use:   "llm",
		Short: "Start, stop or inspect the local LLM server (configs/llm.yaml) used by build-bench",
	}
	cmd.PersistentFlags().StringVar(&repo, "repo", "", "repository root holding scripts/ and configs/ (default: found above the working directory)")
	cmd.PersistentFlags().StringVar(&config, "config", "", "LLM configuration (default <repo>/configs/llm.yaml)")
	script := func(name string) func(*cobra.Command, []string) error {
		return func(c *cobra.Command, _ []string) error {
			root, err := repoRoot(repo)
			if err != nil {
				return err
			}
			x := exec.CommandContext(c.Context(), filepath.Join(root, "scripts", name))
			x.Stdout, x.Stderr = c.OutOrStdout(), c.ErrOrStderr()
			if config != "" {
				x.Env = append(os.Environ(), "RATED_LLM_CONFIG="+config)
			}
			if err := x.Run(); err != nil {
				return fmt.Errorf("scripts/%s: %w", name, err)
			}
			return nil
		}
	}
	cmd.AddCommand(&cobra.Command{Use: "up", Short: "Start the server (idempotent) and wait until the model answers", Args: cobra.NoArgs, RunE: script("llm-up")})
	cmd.AddCommand(&cobra.Command{Use: "down", Short: "Stop the server started by `rated llm up`", Args: cobra.NoArgs, RunE: script("llm-down")})
	cmd.AddCommand(&cobra.Command{
		Use: "status", Short: "Say whether the server answers, which models it serves, and its pid", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			root, err := repoRoot(repo)
			if err != nil {
				return err
			}
			if config == "" {
				config = filepath.Join(root, "configs", "llm.yaml")
			}
			cfg, err := synth.LoadLLMConfig(config, nil)
			if err != nil {
				return err
			}
			return llmStatus(c.Context(), c.OutOrStdout(), cfg, assetsDir(root), &http.Client{Timeout: 5 * time.Second})
		},
	})
	return cmd
}

func llmStatus(ctx context.Context, w io.Writer, cfg synth.LLMConfig, assets string, hc *http.Client) error {
	base := cfg.ResolvedBaseURL()
	pid := "none"
	if b, err := os.ReadFile(filepath.Join(assets, "run", "ollama.pid")); err == nil {
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

// repoRoot returns dir, or the nearest directory above the working directory holding
// scripts/llm-up and go.mod.
func repoRoot(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "scripts", "llm-up")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("no repository root (scripts/llm-up) above the working directory; pass --repo")
		}
	}
}

// assetsDir is $RATED_ASSETS or <repo>/.rated, as in scripts/setup.
func assetsDir(root string) string {
	if d := os.Getenv("RATED_ASSETS"); d != "" {
		return d
	}
	return filepath.Join(root, ".rated")
}
