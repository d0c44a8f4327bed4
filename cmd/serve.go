package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/rated-dev/rated/configs"
	"github.com/rated-dev/rated/internal/textfile"
	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/decisionlog"
	"github.com/rated-dev/rated/pkg/defaultbench"
	"github.com/rated-dev/rated/pkg/encode"
	"github.com/rated-dev/rated/pkg/provenance"
	"github.com/rated-dev/rated/pkg/retrieve"
	"github.com/rated-dev/rated/pkg/router"
	"github.com/rated-dev/rated/pkg/serve"
	"github.com/rated-dev/rated/pkg/state"
)

// serveFlags are the settings of `rated serve`.
type serveFlags struct {
	catalog, model, retriever, stateDir, addr, policy, calibration string
	logDir, tokenFile, mcp                                         string
	ephemeral, prune, logContext                                   bool
	k, contextDim, cacheSize, logFiles, rateBurst, snapshotEvery   int
	hubDepth                                                       int
	logMB, maxBody                                                 int64
	rateLimit, hubStrength                                         float64
	step, grace, followEvery, mcpIdle                              time.Duration
	allowHosts                                                     []string
	enc                                                            encodingFlags
}

func newServeCmd() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve --catalog FILE (--model M | --retriever bm25) --state DIR",
		Short: "Serve reliability-aware tool selection to live agents: HTTP JSON API, MCP, durable state",
		Long: `Serves a tool catalog to agent runtimes. POST /v1/select ranks the tools for a request with the
selection policy (the recommended one by default: learned relevance × health layer) and returns a
decision id; POST /v1/feedback reports whether the chosen tool executed (and served the request);
GET/PUT/DELETE /v1/tools/{id} edit the catalog live; /healthz, /metrics (Prometheus) and
/v1/openapi.yaml describe the server. With --mcp http the same router is also an MCP server at
/mcp (tools find_tools and report_outcome); with --mcp stdio it speaks MCP on stdin/stdout only.

Every acknowledged feedback is durable in --state DIR (an embedded bbolt database) and the state
is reloaded on start; one process per state directory. The query encoder is an installed model
folder or a path (--model NAME|PATH), an OpenAI-compatible embeddings endpoint (--model
openai:URL[#MODEL], key in $OPENAI_API_KEY), or BM25 with hashed contexts (--retriever bm25).

Calibration: policies that read P(relevant | retrieval features) take it from --calibration FILE
(a table2.json of rated eval dynamic with the same retriever, or {"weights": [...]}); without it,
the first start fits it on the embedded default benchmark's dev split with the same encoder,
says so, and stores it in the state.

docs/SERVE.md has the details; docs/DECISION-LOG.md the --decision-log format.`,
		RunE: func(cmd *cobra.Command, _ []string) error { return runServe(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.catalog, "catalog", "", "tool catalog (JSONL, as written by rated crawl): added or updated on start")
	fl.BoolVar(&f.prune, "prune-catalog", false, "remove stored tools that are not in --catalog")
	fl.StringVar(&f.model, "model", "", "query encoder: an installed model folder's name, a path, openai:URL[#MODEL] (key in $OPENAI_API_KEY), or auto")
	fl.StringVar(&f.retriever, "retriever", "", "bm25: BM25 with hashed bag-of-words contexts, no encoder")
	fl.IntVar(&f.contextDim, "context-dim", 384, "context dimension of --retriever bm25")
	fl.StringVar(&f.stateDir, "state", "", "state directory (embedded database), or redis://HOST:PORT/DB[?prefix=NAME] shared by replicas (needs --step); required unless --ephemeral")
	fl.DurationVar(&f.followEvery, "follow-every", router.DefaultFollowEvery, "replicas (--state redis://): how often to read the other replicas' reports (the staleness bound, plus one read)")
	fl.BoolVar(&f.ephemeral, "ephemeral", false, "keep the state in memory only (nothing survives a restart)")
	fl.StringVar(&f.addr, "addr", "127.0.0.1:8080", "listen address of the HTTP API")
	fl.StringVar(&f.policy, "policy", "", "policy spec YAML (a pkg/bandit Spec; default: the embedded configs/recommended.yaml)")
	fl.IntVar(&f.k, "k", 10, "candidates per decision")
	fl.StringVar(&f.calibration, "calibration", "", "calibrator JSON or a table2.json of rated eval dynamic with the same retriever")
	fl.IntVar(&f.hubDepth, "hubness-depth", bandit.DefaultHubnessDepth, "when the calibration is fitted here: count a tool's hubness in each dev query's top N candidates (a value past --k counts all --k; 0: no hubness feature)")
	fl.Float64Var(&f.hubStrength, "hubness-strength", bandit.DefaultHubnessStrength, "when the calibration is fitted here: pseudo-queries at the average share behind each tool's hubness (> 0)")
	fl.IntVar(&f.snapshotEvery, "snapshot-every", 10000, "records between snapshots of the whole state (restart replays at most this many)")
	fl.DurationVar(&f.step, "step", 0, "wall-clock length of one policy step (0: one step per select, as in the simulator)")
	fl.IntVar(&f.cacheSize, "query-cache", 10000, "query embeddings kept in memory")
	fl.StringVar(&f.logDir, "decision-log", "", "directory of the decision log (JSONL, rotated by size; docs/DECISION-LOG.md)")
	fl.Int64Var(&f.logMB, "decision-log-mb", 64, "rotate the decision log at this many MiB")
	fl.IntVar(&f.logFiles, "decision-log-files", 0, "keep at most this many decision-log files (0: all)")
	fl.BoolVar(&f.logContext, "decision-log-context", true, "write each decision's context vector (needed to replay other policies on the log)")
	fl.StringVar(&f.tokenFile, "token-file", "", "file holding the bearer token required on /v1/ and /mcp (or set RATED_SERVE_TOKEN)")
	fl.Float64Var(&f.rateLimit, "rate-limit", 0, "requests per second on /v1/ and /mcp (0: unlimited)")
	fl.IntVar(&f.rateBurst, "rate-burst", 0, "burst above --rate-limit (default: one second's worth)")
	fl.Int64Var(&f.maxBody, "max-body", 1<<20, "largest request body in bytes")
	fl.StringVar(&f.mcp, "mcp", "", "MCP server: http (at /mcp beside the JSON API) or stdio (MCP on stdin/stdout only)")
	f.enc.register(fl)
	fl.DurationVar(&f.grace, "shutdown-grace", 10*time.Second, "how long requests in flight may finish after SIGINT/SIGTERM")
	fl.StringSliceVar(&f.allowHosts, "allow-host", nil, "further Host names accepted when --addr is a loopback address (a reverse proxy on this machine that passes its public name on)")
	fl.DurationVar(&f.mcpIdle, "mcp-session-idle", 30*time.Minute, "close an MCP session (--mcp http) idle this long")
	return cmd
}

// validate checks the numeric flags before any work is done; errors name the flag.
func (f serveFlags) validate() error {
	ints := []struct {
		name     string
		v, lo    int64
		hi       int64  // 0: no upper bound
		whatZero string // what the lowest allowed value means, when it is special
	}{
		{"k", int64(f.k), 1, router.MaxK, ""},
		{"context-dim", int64(f.contextDim), 1, 0, ""},
		{"snapshot-every", int64(f.snapshotEvery), 1, 0, ""},
		{"query-cache", int64(f.cacheSize), 0, 0, " (0: no cache)"},
		{"decision-log-mb", f.logMB, 1, 1 << 30, ""}, // MiB: << 20 must not overflow
		{"decision-log-files", int64(f.logFiles), 0, 0, " (0: all)"},
		{"rate-burst", int64(f.rateBurst), 0, 0, " (0: one second's worth)"},
		{"max-body", f.maxBody, 1, 0, ""},
		{"hubness-depth", int64(f.hubDepth), 0, 0, " (0: no hubness feature)"},
	}
	for _, c := range ints {
		switch {
		case c.hi > 0 && (c.v < c.lo || c.v > c.hi):
			return fmt.Errorf("--%s = %d: must be between %d and %d", c.name, c.v, c.lo, c.hi)
		case c.v < c.lo:
			return fmt.Errorf("--%s = %d: must be at least %d%s", c.name, c.v, c.lo, c.whatZero)
		}
	}
	if !(f.hubStrength > 0) || math.IsInf(f.hubStrength, 0) {
		return fmt.Errorf("--hubness-strength = %v: must be a finite number > 0", f.hubStrength)
	}
	if math.IsNaN(f.rateLimit) || math.IsInf(f.rateLimit, 0) || f.rateLimit < 0 {
		return fmt.Errorf("--rate-limit = %v: must be a finite number of requests per second, at least 0 (0: unlimited)", f.rateLimit)
	}
	durs := []struct {
		name string
		v    time.Duration
		zero bool // 0 is allowed
		note string
	}{
		{"step", f.step, true, " (0: one step per select)"},
		{"shutdown-grace", f.grace, true, ""},
		{"mcp-session-idle", f.mcpIdle, false, ""},
		{"follow-every", f.followEvery, false, ""},
	}
	for _, c := range durs {
		switch {
		case c.zero && c.v < 0:
			return fmt.Errorf("--%s = %s: must be at least 0%s", c.name, c.v, c.note)
		case !c.zero && c.v <= 0:
			return fmt.Errorf("--%s = %s: must be positive", c.name, c.v)
		}
	}
	return nil
}

func runServe(cmd *cobra.Command, f serveFlags) error {
	log := cmd.ErrOrStderr()
	if err := f.validate(); err != nil {
		return err
	}
	switch f.mcp {
	case "", "http", "stdio":
	default:
		return fmt.Errorf("--mcp %q: must be http or stdio", f.mcp)
	}
	if (f.stateDir == "") == !f.ephemeral {
		return fmt.Errorf("give --state DIR (durable) or --ephemeral (in memory), not both or neither")
	}
	if state.IsRedisURL(f.stateDir) && f.step == 0 {
		return fmt.Errorf("--state %s needs --step (e.g. 1s): replicas sharing a state count time in wall-clock steps, since each counts only its own selections", f.stateDir)
	}
	var tools []catalog.Tool
	if f.catalog != "" {
		var err error
		if tools, err = catalog.ReadJSONL(f.catalog); err != nil {
			return err
		}
		if err := validateCatalog(f.catalog, tools); err != nil {
			return err
		}
	}
	spec, err := loadPolicySpec(f.policy)
	if err != nil {
		return err
	}
	token := os.Getenv("RATED_SERVE_TOKEN")
	if f.tokenFile != "" {
		raw, err := os.ReadFile(f.tokenFile)
		if err != nil {
			return fmt.Errorf("--token-file: %w", err)
		}
		token = strings.TrimSpace(string(raw))
		if token == "" {
			return fmt.Errorf("--token-file %s is empty", f.tokenFile)
		}
	}
	// The address is taken before the catalog is encoded and the calibration fitted (minutes
	// with a model), so that a port in use is reported at once; connections wait in the
	// listen queue until the API is up.
	var ln net.Listener
	if f.mcp != "stdio" {
		if ln, err = net.Listen("tcp", f.addr); err != nil {
			return fmt.Errorf("--addr: %w", err)
		}
		defer ln.Close()
	}
	front, closeFront, err := serveFrontend(cmd, f)
	if err != nil {
		return err
	}
	defer closeFront()
	ctx := cmd.Context() // cancelled by SIGINT/SIGTERM (Execute's one signal handler)

	cfg := router.Config{Frontend: front, Policy: spec, K: f.k, Tools: tools, PruneCatalog: f.prune, StepEvery: f.step,
		SnapshotEvery: f.snapshotEvery, Progress: newProgress(log, "encode catalog")}
	if f.calibration != "" {
		if cfg.Calibrator, cfg.CalibrationNote, err = router.LoadCalibration(f.calibration, front.Name()); err != nil {
			return err
		}
	}
	cfg.Calibrate = func() (*bandit.Calibrator, string, error) {
		fmt.Fprintf(log, "calibration: none given or stored; fitting it on the embedded default benchmark's dev split with %s (pass --calibration to use your own)\n", front.Name())
		b, err := defaultbench.Load()
		if err != nil {
			return nil, "", err
		}
		c, note, err := router.FitCalibration(front, b, "dev", f.k, f.hubDepth, f.hubStrength)
		return c, note + " (embedded default benchmark)", err
	}
	reg := prometheus.NewRegistry()
	cfg.Hooks = serve.RouterHooks(reg)
	cfg.FollowEvery = f.followEvery
	switch {
	case f.ephemeral:
		cfg.Store = state.NewMemory()
	case state.IsRedisURL(f.stateDir):
		rs, err := state.OpenRedis(ctx, f.stateDir)
		if err != nil {
			return err
		}
		if desc, safe := rs.Durability(); !safe {
			fmt.Fprintf(log, "rated serve: warning: redis %s persists with %s: an acknowledged report survives a crash of Redis only with appendonly yes and appendfsync always\n", rs.Where(), desc)
		}
		cfg.Store = rs
	default:
		if cfg.Store, err = state.OpenBolt(f.stateDir, state.BoltOptions{}); err != nil {
			return err
		}
	}
	if f.logDir != "" {
		if cfg.Log, err = decisionlog.Open(f.logDir, decisionlog.Options{MaxBytes: f.logMB << 20, MaxFiles: f.logFiles}); err != nil {
			cfg.Store.Close()
			return err
		}
		cfg.LogContext = f.logContext
	}
	r, err := router.New(ctx, cfg)
	if err != nil {
		cfg.Store.Close()
		if cfg.Log != nil {
			cfg.Log.Close()
		}
		return err
	}
	info := r.Info()
	where := "in memory (--ephemeral)"
	switch rs, ok := cfg.Store.(*state.Redis); {
	case ok:
		desc, _ := rs.Durability()
		where = fmt.Sprintf("redis %s (%s; a replica: others' reports read every %s)", rs.Where(), desc, cfg.FollowEvery)
	case !f.ephemeral:
		where = f.stateDir
	}
	fmt.Fprintf(log, "rated serve: policy %s, retriever %s, %d tools, step %d, state %s\ncalibration: %s\n",
		info.Policy, info.Frontend, info.Tools, info.Step, where, orNone(info.Calibration))
	version := provenance.Current().String()
	if f.mcp == "stdio" {
		err := serve.ServeStdio(ctx, r, version, os.Stdin, os.Stdout, log)
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			err = nil // stopped by a signal, as the HTTP server is: not a failure
		}
		return closeServed(log, r, err)
	}
	srv := serve.New(r, serve.Options{Token: token, MaxBodyBytes: f.maxBody, RateLimit: f.rateLimit, RateBurst: f.rateBurst,
		MCP: f.mcp == "http", MCPSessionIdle: f.mcpIdle, AllowedHosts: f.allowHosts, Version: version, Registry: reg})
	fmt.Fprintf(log, "rated serve: listening on http://%s\n", ln.Addr())
	err = srv.Serve(ctx, ln, f.grace)
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	if errors.Is(err, serve.ErrShutdownGrace) {
		// Not a failure of the server: the state is still saved below; say what was cut off.
		fmt.Fprintf(log, "rated serve: warning: --shutdown-grace %s: %v\n", f.grace, err)
		err = nil
	}
	return closeServed(log, r, err)
}

// closeServed saves the router's state after serving ended with err, saying so when both went well.
func closeServed(log io.Writer, r *router.Router, err error) error {
	cerr := r.Close()
	if err == nil && cerr == nil {
		fmt.Fprintln(log, "rated serve: stopped; state saved")
	}
	return errors.Join(err, cerr)
}

// validateCatalog checks the tools read from path as the router will, before the work of a
// start; an error names the file and line of the tool, as the catalog reader's do.
func validateCatalog(path string, tools []catalog.Tool) error {
	err := router.ValidateTools(tools)
	var ie *router.InputError
	if !errors.As(err, &ie) {
		return err
	}
	var i int
	if _, serr := fmt.Sscanf(ie.Field, "tools[%d]", &i); serr != nil || i < 0 || i >= len(tools) {
		return fmt.Errorf("--catalog %s: %w", path, err)
	}
	field := strings.TrimPrefix(strings.TrimPrefix(ie.Field, fmt.Sprintf("tools[%d]", i)), ".")
	// ReadJSONL read one tool per non-blank line: find the line of the i-th.
	line, n := 0, 0
	fh, oerr := os.Open(path)
	if oerr == nil {
		textfile.Lines(fh, path, func(l int, _ []byte) error {
			if n == i {
				line = l
				return errStopLines
			}
			n++
			return nil
		})
		fh.Close()
	}
	if line == 0 {
		return fmt.Errorf("--catalog %s: %w", path, err)
	}
	if field == "" {
		return fmt.Errorf("%s:%d: %s", path, line, ie.Message)
	}
	return fmt.Errorf("%s:%d: %s: %s", path, line, field, ie.Message)
}

var errStopLines = errors.New("stop")

func orNone(s string) string {
	if s == "" {
		return "none (the policy reads no calibrated relevance)"
	}
	return s
}

// loadPolicySpec reads a policy spec YAML (unknown keys are errors); "" is the recommended one.
func loadPolicySpec(path string) (*bandit.Spec, error) {
	if path == "" {
		return nil, nil
	}
	raw, err := configs.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--policy: %w", err)
	}
	var s bandit.Spec
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("--policy %s: %w", path, err)
	}
	if err := s.Validate(path); err != nil {
		return nil, err
	}
	return &s, nil
}

// serveFrontend builds the first stage: --retriever bm25, or the encoder --model names (an
// installed model folder, a path, or openai:URL[#MODEL], as every command takes it).
func serveFrontend(cmd *cobra.Command, f serveFlags) (router.Frontend, func(), error) {
	noop := func() {}
	switch {
	case f.retriever != "" && f.retriever != "bm25":
		return nil, noop, fmt.Errorf("--retriever %q: only bm25 (a dense encoder comes from --model)", f.retriever)
	case f.retriever == "bm25" && f.model != "":
		return nil, noop, fmt.Errorf("give --model or --retriever bm25, not both")
	case f.retriever == "bm25":
		front, err := router.NewLexicalFrontend(f.contextDim)
		return front, noop, err
	case f.model == "":
		return nil, noop, fmt.Errorf("--model is required (a model folder name, a path, openai:URL[#MODEL], or auto), or --retriever bm25")
	}
	h, err := assetHome(cmd)
	if err != nil {
		return nil, noop, err
	}
	// No embedding cache on disk: document vectors live in the state, and an append-only cache
	// would grow with every distinct query; repeated queries hit the in-memory cache instead.
	opts, err := f.enc.apply(encode.Options{})
	if err != nil {
		return nil, noop, err
	}
	enc, err := encoderSource(h, opts).Open(f.model)
	if err != nil {
		return nil, noop, fmt.Errorf("--model: %w", err)
	}
	if retrieve.IsEndpoint(f.model) {
		// An endpoint reports its dimension with its first answer.
		if _, err := enc.EncodeQueries([]string{"dimension probe"}); err != nil {
			enc.Close()
			return nil, noop, fmt.Errorf("--model %s: %w", f.model, err)
		}
	}
	return router.NewDenseFrontend(enc, f.cacheSize), func() { enc.Close() }, nil
}
