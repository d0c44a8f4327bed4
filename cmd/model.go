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

	"github.com/rated-dev/rated/internal/outdir"
	"github.com/rated-dev/rated/pkg/encode"
	"github.com/rated-dev/rated/pkg/home"
	"github.com/rated-dev/rated/pkg/retrieve"
	"github.com/rated-dev/rated/pkg/train"
)

// newModelCmd builds `rated model list`, `rated model info DIR`, `rated model import DIR` and
// `rated model interpolate`.
func newModelCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "model",
		Short: "List, inspect and import encoder model folders (model.onnx, tokenizer.json, rated.yaml)",
	}

	list := &cobra.Command{
		Use:   "list",
		Short: "List the model folders installed in the asset home (<home>/models)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, err := assetHome(cmd)
			if err != nil {
				return err
			}
			return listModels(cmd.OutOrStdout(), h)
		},
	}

	var lib, device, text string
	var enc encodingFlags
	info := &cobra.Command{
		Use:   "info DIR|NAME",
		Short: "Load a model folder (a path, or the name of an installed one) with ONNX Runtime and describe its towers (optionally embed a text)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := assetHome(cmd)
			if err != nil {
				return err
			}
			// A name, as the other commands take it: the installed folder of that name.
			dir, err := retrieve.EncoderSource{ModelsDir: h.ModelsDir(), Missing: h.Missing}.FindModel(args[0])
			if err != nil {
				return err
			}
			args = []string{dir}
			if lib == "" {
				lib = h.ORTLibrary()
				if _, err := os.Stat(lib); err != nil {
					return h.Missing("ONNX Runtime library", lib, "onnxruntime")
				}
			}
			rt := encode.NewRuntime(lib)
			opts, err := enc.apply(encode.Options{Runtime: rt, Device: device})
			if err != nil {
				return err
			}
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
	info.Flags().StringVar(&lib, "lib", "", "ONNX Runtime shared library (default <asset home>/lib/libonnxruntime.so)")
	info.Flags().StringVar(&device, "device", encode.DeviceCPU, "execution provider: cpu or cuda")
	enc.register(info.Flags())
	info.Flags().StringVar(&text, "encode", "", "embed this text with both towers and print a summary (cross-encoder: score it against itself)")
	cmd.AddCommand(list, info, newModelImportCmd(), newModelInterpolateCmd())
	return cmd
}

// newModelImportCmd builds `rated model import DIR`: a Hugging Face / sentence-transformers ONNX
// folder becomes a model folder of the asset home (encode.ImportHF).
func newModelImportCmd() *cobra.Command {
	var name, onnxFile, queryPrefix, docPrefix string
	cmd := &cobra.Command{
		Use:   "import DIR",
		Short: "Turn a Hugging Face / sentence-transformers ONNX folder into a model folder of the asset home",
		Long: `Reads DIR, a Hugging Face / sentence-transformers model folder with an ONNX export (config.json,
tokenizer.json, modules.json with Transformer, Pooling and optionally Normalize, the Pooling
module's config.json such as 1_Pooling/config.json, sentence_bert_config.json when present, and
model.onnx or onnx/model.onnx), and writes <asset home>/models/NAME: model.onnx, tokenizer.json
and a rated.yaml with the pooling (CLS or mean), max length, dimension and prefixes it found,
and the sha256 of model.onnx and tokenizer.json. Every later load checks those digests and
refuses a folder whose files changed. When the ONNX Runtime library is installed, the new folder
is opened once to check its inputs, outputs and dimension. Use it as --encoder NAME or
dense:NAME.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := assetHome(cmd)
			if err != nil {
				return err
			}
			opts := encode.ImportOptions{Name: name, ONNX: onnxFile}
			if cmd.Flags().Changed("query-prefix") {
				opts.QueryPrefix = &queryPrefix
			}
			if cmd.Flags().Changed("doc-prefix") {
				opts.DocPrefix = &docPrefix
			}
			dir, cfg, err := encode.ImportHF(args[0], h.ModelsDir(), opts)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "imported %s: pooling %s, max_length %d, dim %d, query prefix %q\n", dir, cfg.Pooling, cfg.MaxLength, cfg.Dim, cfg.QueryPrefix)
			if _, err := os.Stat(h.ORTLibrary()); err != nil {
				fmt.Fprintf(w, "not opened: no ONNX Runtime library at %s (rated setup onnxruntime); check it later with rated model info %s\n", h.ORTLibrary(), dir)
				return nil
			}
			m, err := encode.Open(dir, encode.Options{Runtime: encode.NewRuntime(h.ORTLibrary())})
			if err != nil {
				os.RemoveAll(dir)
				return fmt.Errorf("the imported folder does not open, so it was removed again: %w", err)
			}
			defer m.Close()
			fmt.Fprintf(w, "checked: opens with ONNX Runtime, %d dimensions; use it as --encoder %s or dense:%s\n", m.Dim(), cfg.Name, cfg.Name)
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "model name and folder name (default: DIR's name)")
	cmd.Flags().StringVar(&onnxFile, "onnx", "", "ONNX file inside DIR (default: model.onnx, else onnx/model.onnx)")
	cmd.Flags().StringVar(&queryPrefix, "query-prefix", "", "text prepended to queries (default: config_sentence_transformers.json's query prompt), e.g. BGE's instruction")
	cmd.Flags().StringVar(&docPrefix, "doc-prefix", "", "text prepended to documents (default: the document prompt)")
	return cmd
}

// newModelInterpolateCmd builds `rated model interpolate`: a fine-tuned encoder's weights mixed
// with those of the encoder it started from (train.InterpolateModel).
func newModelInterpolateCmd() *cobra.Command {
	var base, tuned, out, name string
	var alpha, alphaQuery, alphaDoc float64
	cmd := &cobra.Command{
		Use:   "interpolate --base DIR --tuned DIR --alpha A --out DIR",
		Short: "Mix a fine-tuned encoder's weights with its base's: (1-A)*base + A*tuned (WiSE-FT)",
		Long: `Writes --out, a model folder whose every float weight is (1-A)*base + A*tuned, where --tuned
is a folder written by rated finetune and --base the model folder it started from (WiSE-FT:
Wortsman et al., "Robust fine-tuning of zero-shot models", CVPR 2022). A fine-tune gains on the
queries it was trained for and can lose elsewhere; a point between the two often keeps most of
both. --alpha sets A for both towers; --alpha-query and --alpha-doc set one tower's A (two
towers are then written, also from a shared fine-tune): --alpha-doc 0 keeps the base's tool
embeddings, so an index built with the base stays valid. A = 0 gives the base weights, 1 the
tuned ones. Choose A on a dev split (rated eval offline --split dev), never on test.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			changed := func(f string) bool { return cmd.Flags().Changed(f) }
			switch {
			case base == "":
				return errors.New("--base is required: the model folder the fine-tune started from")
			case tuned == "":
				return errors.New("--tuned is required: the folder rated finetune wrote")
			case out == "":
				return errors.New("--out is required")
			case !changed("alpha") && !(changed("alpha-query") && changed("alpha-doc")):
				return errors.New("--alpha is required (or both --alpha-query and --alpha-doc): the tuned weights' share, in [0, 1]")
			}
			shares := train.Shares{Query: alpha, Doc: alpha}
			if changed("alpha-query") {
				shares.Query = alphaQuery
			}
			if changed("alpha-doc") {
				shares.Doc = alphaDoc
			}
			if err := shares.Validate(); err != nil {
				return fmt.Errorf("--alpha, --alpha-query, --alpha-doc: %w", err)
			}
			// The set replaces --out as a whole: an input inside it (or --out inside an input)
			// would be lost or read half-replaced.
			if err := refuseOverlap(out, input{"--base", base}, input{"--tuned", tuned}); err != nil {
				return err
			}
			if name == "" {
				name = filepath.Base(filepath.Clean(out))
			}
			outSet, err := outdir.Begin(out, modelInterpolateOutput())
			if err != nil {
				return fmt.Errorf("model interpolate: %w", err)
			}
			defer outSet.Abort()
			if err := train.InterpolateModel(base, tuned, outSet.Dir(), name, shares); err != nil {
				return err
			}
			if err := outSet.Commit(); err != nil {
				return fmt.Errorf("model interpolate: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: tuned share %g (query tower), %g (doc tower) of %s over %s; use it as --encoder %s or dense:%s\n",
				out, shares.Query, shares.Doc, tuned, base, out, out)
			return nil
		},
	}
	cmd.Flags().StringVar(&base, "base", "", "model folder the fine-tune started from (e.g. <home>/models/all-minilm-l6-v2)")
	cmd.Flags().StringVar(&tuned, "tuned", "", "model folder written by rated finetune")
	cmd.Flags().Float64Var(&alpha, "alpha", 0, "share of the tuned weights in both towers, in [0, 1]")
	cmd.Flags().Float64Var(&alphaQuery, "alpha-query", 0, "share of the tuned weights in the query tower (default --alpha)")
	cmd.Flags().Float64Var(&alphaDoc, "alpha-doc", 0, "share of the tuned weights in the document tower (default --alpha)")
	cmd.Flags().StringVar(&out, "out", "", "model folder to write")
	cmd.Flags().StringVar(&name, "name", "", "model name in rated.yaml (default: --out's base name)")
	return cmd
}

// listModels prints one line per folder of the home's models/ holding a rated.yaml; broken
// folders are listed with their error rather than hidden.
func listModels(w io.Writer, h home.Home) error {
	root := h.ModelsDir()
	entries, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return h.Missing("model folders", root, "models")
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
		return h.Missing("model folder (with "+encode.ConfigFile+")", root, "models")
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
