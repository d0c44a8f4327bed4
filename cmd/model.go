package cmd

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/rated-dev/rated/pkg/encode"
)

// newModelCmd builds `rated model list` and `rated model info DIR`.
func newModelCmd() *cobra.Command {
	var assets string
	cmd := &cobra.Command{
		Use:   "model",
		Short: "List and inspect the encoder model folders (model.onnx, tokenizer.json, rated.yaml)",
	}
	cmd.PersistentFlags().StringVar(&assets, "assets", "", "asset folder (default $RATED_ASSETS or .rated)")
	assetsDir := func() string {
		if assets != "" {
			return assets
		}
		return encode.DefaultAssetsDir()
	}

	list := &cobra.Command{
		Use:   "list",
		Short: "List the model folders installed under <assets>/models",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return listModels(cmd.OutOrStdout(), filepath.Join(assetsDir(), "models"))
		},
	}

	var lib, device, text string
	var threads int
	info := &cobra.Command{
		Use:   "info DIR",
		Short: "Load a model folder with ONNX Runtime and describe its towers (optionally embed a text)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if lib == "" {
				lib = encode.DefaultLibraryPath(assetsDir())
			}
			rt := encode.NewRuntime(lib)
			opts := encode.Options{Runtime: rt, Device: device, Threads: threads}
			cfg, err := encode.LoadConfig(args[0])
			if err != nil {
				return err
			}
			if cfg.Kind == encode.KindCrossEncoder {
				ce, err := encode.OpenCrossEncoder(args[0], opts)
				if err != nil {
					return err
				}
				defer ce.Close()
				return describeCrossEncoder(cmd.OutOrStdout(), rt, ce, cfg, text)
			}
			m, err := encode.Open(args[0], opts)
			if err != nil {
				return err
			}
			defer m.Close()
			return describeModel(cmd.OutOrStdout(), rt, m, text)
		},
	}
	info.Flags().StringVar(&lib, "lib", "", "ONNX Runtime shared library (default <assets>/lib/libonnxruntime.so)")
	info.Flags().StringVar(&device, "device", encode.DeviceCPU, "execution provider: cpu or cuda")
	info.Flags().IntVar(&threads, "threads", 0, "ONNX Runtime intra-op threads (0: its default)")
	info.Flags().StringVar(&text, "encode", "", "embed this text with both towers and print a summary (cross-encoder: score it against itself)")
	cmd.AddCommand(list, info)
	return cmd
}

// listModels prints one line per folder of root holding a rated.yaml; broken folders are listed
// with their error rather than hidden.
func listModels(w io.Writer, root string) error {
	entries, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no model folder at %s: run scripts/setup", root)
	}
	if err != nil {
		return err
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tTOWERS\tPOOLING\tDIM\tMAX_LEN\tSOURCE\tDIR")
	n := 0
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		if !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, encode.ConfigFile)); err != nil {
			continue
		}
		n++
		c, err := encode.LoadConfig(dir)
		if err != nil {
			fmt.Fprintf(tw, "%s\t(invalid)\t\t\t\t\t%v\t%s\n", e.Name(), err, dir)
			continue
		}
		dim := "?"
		if c.Dim > 0 {
			dim = fmt.Sprint(c.Dim)
		}
		src := c.Source.Package
		if src == "" {
			src = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", c.Name, c.Kind, c.Towers, c.Pooling, dim, c.MaxLength, src, dir)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("no model folder (with %s) under %s: run scripts/setup", encode.ConfigFile, root)
	}
	return nil
}

func describeModel(w io.Writer, rt *encode.Runtime, m *encode.Model, text string) error {
	c := m.Config()
	fmt.Fprintf(w, "model:        %s (%s)\n", c.Name, m.Dir())
	fmt.Fprintf(w, "onnxruntime:  %s (%s)\n", rt.Version(), rt.LibraryPath())
	fmt.Fprintf(w, "kind:         %s, towers %s\n", c.Kind, c.Towers)
	fmt.Fprintf(w, "pooling:      %s, normalize %v, max_length %d, dim %d\n", c.Pooling, c.NormalizeEnabled(), c.MaxLength, m.Dim())
	if c.Source.Package != "" {
		fmt.Fprintf(w, "source:       %s (sha256 %s)\n", c.Source.Package, c.Source.SHA256)
		fmt.Fprintf(w, "upstream:     %s\n", c.Source.Upstream)
	}
	for _, t := range m.Towers() {
		fmt.Fprintf(w, "%s tower:\n", t.Tower)
		fmt.Fprintf(w, "  model:      %s (sha256 %s)\n", t.ModelFile, t.ModelSHA256)
		fmt.Fprintf(w, "  tokenizer:  %s\n", t.TokenizerFile)
		fmt.Fprintf(w, "  inputs:     %v -> output %s (token states: %v), dim %d\n", t.Inputs, t.Output, t.TokenStates, t.Dim)
		fmt.Fprintf(w, "  prefix:     %q\n", t.Prefix)
	}
	if text == "" {
		return nil
	}
	for _, t := range m.Towers() {
		var vecs [][]float32
		var err error
		if t.Tower == encode.TowerQuery {
			vecs, err = m.EncodeQueries([]string{text})
		} else {
			vecs, err = m.EncodeDocs([]string{text})
		}
		if err != nil {
			return err
		}
		v := vecs[0]
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		fmt.Fprintf(w, "%s embedding of %q: norm %.6f, first values %.5f\n", t.Tower, text, math.Sqrt(n), v[:min(6, len(v))])
	}
	return nil
}

func describeCrossEncoder(w io.Writer, rt *encode.Runtime, ce *encode.CrossEncoder, c *encode.Config, text string) error {
	fmt.Fprintf(w, "model:        %s (cross-encoder)\n", c.Name)
	fmt.Fprintf(w, "onnxruntime:  %s (%s)\n", rt.Version(), rt.LibraryPath())
	fmt.Fprintf(w, "files:        %s, %s; output %q, max_length %d\n", c.TowerModel(encode.TowerDoc), c.TowerTokenizer(encode.TowerDoc), c.Output, c.MaxLength)
	if text == "" {
		return nil
	}
	scores, err := ce.Score(text, []string{text})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "score(%q, itself): %.5f\n", text, scores[0])
	return nil
}
