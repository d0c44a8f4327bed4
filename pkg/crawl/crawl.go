package crawl

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/rated-dev/rated/internal/atomicfile"
	"github.com/rated-dev/rated/internal/outdir"
	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/provenance"
)

// LocalSource is a user-given source for a platform: an archive, a directory or a bare git
// directory (with an optional revision).
type LocalSource struct {
	Path string
	Rev  string
}

// ParseLocalSource parses "PLATFORM=PATH[@REV]".
func ParseLocalSource(spec string) (string, LocalSource, error) {
	plat, p, ok := strings.Cut(spec, "=")
	if !ok || plat == "" || p == "" {
		return "", LocalSource{}, fmt.Errorf("--source %q: want PLATFORM=PATH[@REV]", spec)
	}
	if !knownPlatform(plat) {
		return "", LocalSource{}, fmt.Errorf("--source %q: unknown platform %q (known: %s)", spec, plat, strings.Join(Platforms, ", "))
	}
	ls := LocalSource{Path: p}
	// PATH@REV: a revision when PATH exists and PATH@REV does not (revisions may hold '/').
	if i := strings.LastIndex(p, "@"); i > 0 {
		if _, err := os.Stat(p); err != nil {
			if _, err := os.Stat(p[:i]); err == nil {
				ls.Path, ls.Rev = p[:i], p[i+1:]
			}
		}
	}
	return plat, ls, nil
}

func knownPlatform(p string) bool {
	for _, q := range Platforms {
		if p == q {
			return true
		}
	}
	return false
}

// Options configure a crawl.
type Options struct {
	// Platforms to crawl (all of Platforms when empty).
	Platforms []string
	// Config holds the pinned registry sources; Local overrides them per platform.
	Config *SourcesConfig
	Local  map[string][]LocalSource
	// Fetcher downloads registry sources (nil: only local sources may be used).
	Fetcher *Fetcher
	// Latest asks the registry for the newest version instead of the pinned one.
	Latest bool
	// Limits bound what is read of each source; zero fields take DefaultLimits'.
	Limits Limits
	// Progress reports per-platform progress (nil: silent).
	Progress Progress
}

// platforms is the platforms to crawl: those asked for, each once (a repeated one was crawled
// and counted twice), or all of Platforms.
func (o Options) platforms() []string {
	if len(o.Platforms) == 0 {
		return Platforms
	}
	var out []string
	for _, p := range o.Platforms {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// Check refuses, before anything is fetched or read, an unknown platform, a local source for a
// platform that is not crawled (it would be ignored), a local source that does not exist or
// that LoadTree cannot read (CheckSource), and a platform with neither a local source nor a
// pinned one it can download.
func (o Options) Check() error {
	plats := o.platforms()
	for _, plat := range plats {
		if !knownPlatform(plat) {
			return fmt.Errorf("--platform %q: unknown platform (known: %s)", plat, strings.Join(Platforms, ", "))
		}
		if _, local := o.Local[plat]; local {
			continue
		}
		if o.Config == nil || len(o.Config.Platforms[plat]) == 0 {
			return fmt.Errorf("crawl %s: no sources configured and no --source given", plat)
		}
		if o.Fetcher == nil {
			return fmt.Errorf("crawl %s: registry sources need a download cache", plat)
		}
	}
	for _, plat := range slices.Sorted(maps.Keys(o.Local)) {
		for _, ls := range o.Local[plat] {
			spec := plat + "=" + ls.Path
			if ls.Rev != "" {
				spec += "@" + ls.Rev
			}
			if !slices.Contains(plats, plat) {
				return fmt.Errorf("--source %s: platform %s is not crawled (--platform %s)", spec, plat, strings.Join(plats, ","))
			}
			if err := CheckSource(ls.Path, ls.Rev); err != nil {
				return fmt.Errorf("--source %s: %w", spec, err)
			}
		}
	}
	return nil
}

// Crawl runs the parsers of each platform over its sources and returns one result per platform.
func Crawl(ctx context.Context, opts Options) ([]*PlatformResult, error) {
	if err := opts.Check(); err != nil {
		return nil, err
	}
	plats := opts.platforms()
	lim := opts.Limits // LoadTree fills the zero fields from DefaultLimits
	prog := opts.Progress
	if prog == nil {
		prog = NopProgress{}
	}
	var results []*PlatformResult
	for _, plat := range plats {
		var locals []LocalSource
		if ls, ok := opts.Local[plat]; ok {
			locals = ls
		} else {
			if opts.Config == nil || len(opts.Config.Platforms[plat]) == 0 {
				return nil, fmt.Errorf("crawl %s: no sources configured and no --source given", plat)
			}
			if opts.Fetcher == nil {
				return nil, fmt.Errorf("crawl %s: registry sources need a download cache", plat)
			}
			for _, s := range opts.Config.Platforms[plat] {
				if opts.Latest {
					v, err := opts.Fetcher.Latest(ctx, s)
					if err != nil {
						return nil, fmt.Errorf("crawl %s: %w", plat, err)
					}
					if v != s.Version {
						s.Version, s.Sha256 = v, "" // the pinned digest is the pinned version's
					}
				}
				p, err := opts.Fetcher.Fetch(ctx, s)
				if err != nil {
					return nil, fmt.Errorf("crawl %s: %w", plat, err)
				}
				locals = append(locals, LocalSource{Path: p})
			}
		}
		prog.Start("crawl "+plat, len(locals)+1, 0)
		trees := make([]*Tree, 0, len(locals))
		for _, ls := range locals {
			if err := ctx.Err(); err != nil {
				prog.Finish()
				return nil, err
			}
			t, err := LoadTree(ctx, ls.Path, ls.Rev, lim)
			if err != nil {
				prog.Finish()
				return nil, fmt.Errorf("crawl %s: %w", plat, err)
			}
			trees = append(trees, t)
			prog.Add(1)
		}
		res, err := crawlPlatform(plat, trees)
		prog.Add(1)
		prog.Finish()
		if err != nil {
			return nil, err
		}
		results = append(results, res)
	}
	return results, nil
}

func crawlPlatform(plat string, trees []*Tree) (*PlatformResult, error) {
	switch plat {
	case catalog.PlatformN8n:
		return CrawlN8n(trees)
	case catalog.PlatformLangChain:
		return CrawlLangChain(trees)
	case catalog.PlatformCrewAI:
		return CrawlCrewAI(trees)
	default:
		return CrawlLlamaIndex(trees)
	}
}

// AllTools concatenates the tools of all results, dropping ids already seen.
func AllTools(results []*PlatformResult) []catalog.Tool {
	var out []catalog.Tool
	seen := map[string]bool{}
	for _, r := range results {
		for _, t := range r.Tools {
			if !seen[t.ID] {
				seen[t.ID] = true
				out = append(out, t)
			}
		}
	}
	return out
}

// PlatformStats are the per-platform figures `rated crawl` prints (the paper's Figure 1 claim).
type PlatformStats struct {
	Platform         string         `json:"platform"`
	Tools            int            `json:"tools"`
	WithEndpoint     float64        `json:"share_with_endpoint"`
	NeedsAuth        float64        `json:"share_needing_auth"`
	RuntimeOnly      int            `json:"runtime_only"`
	Probed           bool           `json:"probed"`
	Broken           float64        `json:"share_broken,omitempty"`
	LacksAuth        float64        `json:"share_lacking_auth,omitempty"`
	BrokenOrNoAuth   float64        `json:"share_broken_or_lacking_auth,omitempty"`
	ProbeStatus      map[string]int `json:"probe_status,omitempty"`
	Warnings         int            `json:"warnings"`
	Duplicates       int            `json:"duplicates"`
	Sources          []SourceInfo   `json:"sources"`
	ConsistencyModel string         `json:"consistency_method,omitempty"`
}

// ComputeStats summarises tools by platform. Shares are fractions of the platform's tools. A tool
// needs auth when it has a required credential. After probing, "broken" counts tools whose
// endpoint status is broken, "lacking auth" those answering 401/403.
func ComputeStats(results []*PlatformResult, tools []catalog.Tool) []PlatformStats {
	byPlat := map[string][]*catalog.Tool{}
	for i := range tools {
		byPlat[tools[i].Platform] = append(byPlat[tools[i].Platform], &tools[i])
	}
	var out []PlatformStats
	for _, r := range results {
		st := PlatformStats{Platform: r.Platform, Warnings: len(r.Warnings), Duplicates: r.Duplicates, Sources: r.Sources}
		ts := byPlat[r.Platform]
		st.Tools = len(ts)
		var ep, auth, broken, noauth int
		for _, t := range ts {
			if len(t.Endpoints) > 0 {
				ep++
			}
			for _, c := range t.Auth {
				if c.Required {
					auth++
					break
				}
			}
			if len(t.RuntimeOnly) > 0 {
				st.RuntimeOnly++
			}
			if t.Prior != nil {
				st.ConsistencyModel = t.Prior.ConsistencyMethod
			}
			if t.Probe != nil {
				st.Probed = true
				if st.ProbeStatus == nil {
					st.ProbeStatus = map[string]int{}
				}
				st.ProbeStatus[t.Probe.Status]++
				switch t.Probe.Status {
				case catalog.ProbeBroken:
					broken++
				case catalog.ProbeNeedsAuth:
					noauth++
				}
			}
		}
		if st.Tools > 0 {
			n := float64(st.Tools)
			st.WithEndpoint, st.NeedsAuth = float64(ep)/n, float64(auth)/n
			if st.Probed {
				st.Broken, st.LacksAuth, st.BrokenOrNoAuth = float64(broken)/n, float64(noauth)/n, float64(broken+noauth)/n
			}
		}
		out = append(out, st)
	}
	return out
}

// WriteStatsTable prints the stats as an aligned text table.
func WriteStatsTable(w io.Writer, stats []PlatformStats) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	probed := false
	for _, s := range stats {
		probed = probed || s.Probed
	}
	head := "platform\ttools\twith endpoint\tneeding auth\truntime-only\t"
	if probed {
		head += "broken\tlacking auth\tbroken or lacking auth\t"
	}
	fmt.Fprintln(tw, head)
	total := PlatformStats{Platform: "all"}
	var ep, au, br, na float64
	for _, s := range stats {
		row := fmt.Sprintf("%s\t%d\t%.1f%%\t%.1f%%\t%d\t", s.Platform, s.Tools, 100*s.WithEndpoint, 100*s.NeedsAuth, s.RuntimeOnly)
		if probed {
			row += fmt.Sprintf("%.1f%%\t%.1f%%\t%.1f%%\t", 100*s.Broken, 100*s.LacksAuth, 100*s.BrokenOrNoAuth)
		}
		fmt.Fprintln(tw, row)
		n := float64(s.Tools)
		total.Tools += s.Tools
		total.RuntimeOnly += s.RuntimeOnly
		ep += s.WithEndpoint * n
		au += s.NeedsAuth * n
		br += s.Broken * n
		na += s.LacksAuth * n
	}
	if total.Tools > 0 {
		n := float64(total.Tools)
		row := fmt.Sprintf("all\t%d\t%.1f%%\t%.1f%%\t%d\t", total.Tools, 100*ep/n, 100*au/n, total.RuntimeOnly)
		if probed {
			row += fmt.Sprintf("%.1f%%\t%.1f%%\t%.1f%%\t", 100*br/n, 100*na/n, 100*(br+na)/n)
		}
		fmt.Fprintln(tw, row)
	}
	return tw.Flush()
}

// StatsFile is the JSON that --stats-out holds and the command prints: the run's record (the
// rated build and asset home that produced the catalog) and the per-platform stats.
type StatsFile struct {
	Run       provenance.Record `json:"run"`
	Platforms []PlatformStats   `json:"platforms"`
}

// WriteStatsJSON prints the run record and the stats as indented JSON (StatsFile).
func WriteStatsJSON(w io.Writer, run provenance.Record, stats []PlatformStats) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(StatsFile{Run: run, Platforms: stats})
}

// SortedWarnings returns all warnings of the results, sorted.
func SortedWarnings(results []*PlatformResult) []string {
	var out []string
	for _, r := range results {
		out = append(out, r.Warnings...)
	}
	sort.Strings(out)
	return out
}

// RunOptions configure a whole `rated crawl`: crawl, prior, optional probe, output and report.
type RunOptions struct {
	Options
	// Out is the catalog JSONL written atomically.
	Out string
	// Prober, when set, health-checks every endpoint before writing.
	Prober *Prober
	// Similarity scores name–description consistency for the prior; the lexical fallback when nil.
	Similarity catalog.Similarity
	// Prior weighs the metadata prior (the paper's 0.5/0.3/0.2 when SourceWeights is nil).
	Prior catalog.PriorConfig
	// StatsOut, when set, receives the per-platform stats as JSON (written atomically).
	StatsOut string
	// Provenance is the run's record, written with the stats.
	Provenance provenance.Record
	// Stdout receives the table and JSON; Stderr the notes and warnings.
	Stdout, Stderr io.Writer
	// MaxWarnings bounds the warnings printed (0: none; all are counted in the stats).
	MaxWarnings int
}

// Run crawls, computes the metadata prior, probes when asked, writes the catalog and prints
// the per-platform table and JSON.
func Run(ctx context.Context, ro RunOptions) ([]PlatformStats, error) {
	if ro.Stdout == nil {
		ro.Stdout = io.Discard
	}
	if ro.Stderr == nil {
		ro.Stderr = io.Discard
	}
	if err := ro.Options.Check(); err != nil {
		return nil, err
	}
	if err := checkTargets(ro.Out, ro.StatsOut); err != nil {
		return nil, err
	}
	// The catalog and its stats are one output set: locked before any work, written together.
	for _, p := range []string{ro.Out, ro.StatsOut} {
		if p == "" {
			continue
		}
		lock, err := outdir.Acquire(p, "crawl")
		if err != nil {
			return nil, err
		}
		defer lock.Release()
	}
	results, err := Crawl(ctx, ro.Options)
	if err != nil {
		return nil, err
	}
	tools := AllTools(results)
	if len(tools) == 0 {
		// The warnings say why (nodes skipped, files unreadable): they are the error's substance.
		warnings := SortedWarnings(results)
		if len(warnings) == 0 {
			return nil, fmt.Errorf("crawl found no tools")
		}
		shown := warnings[:min(len(warnings), max(ro.MaxWarnings, 10))]
		more := ""
		if len(warnings) > len(shown) {
			more = fmt.Sprintf("\n  ... and %d more", len(warnings)-len(shown))
		}
		return nil, fmt.Errorf("crawl found no tools; %d warnings:\n  %s%s", len(warnings), strings.Join(shown, "\n  "), more)
	}
	sim := ro.Similarity
	if sim == nil {
		sim = catalog.LexicalSimilarity{}
		fmt.Fprintf(ro.Stderr, "metadata prior: name–description consistency by %s (lexical fallback: no sentence encoder configured)\n", sim.Name())
	} else {
		fmt.Fprintf(ro.Stderr, "metadata prior: name–description consistency by %s\n", sim.Name())
	}
	prior := ro.Prior
	if prior.SourceWeights == nil {
		prior = catalog.PaperPriorConfig()
	}
	if err := catalog.ComputePriors(tools, prior, sim); err != nil {
		return nil, err
	}
	var journal *ProbeJournal
	if ro.Prober != nil {
		if ro.Out != "" {
			// Beside the catalog and under its lock: a rerun into the same --out resumes.
			jp := ProbeJournalPath(ro.Out)
			j, done, err := OpenProbeJournal(jp)
			if err != nil {
				return nil, err
			}
			defer j.Close()
			journal = j
			ro.Prober.Journal, ro.Prober.Resumed = j, done
			if len(done) > 0 {
				fmt.Fprintf(ro.Stderr, "probe: resuming, %d results kept from %s\n", len(done), jp)
			}
		}
		if err := ro.Prober.ProbeTools(ctx, tools); err != nil {
			return nil, err
		}
	}
	warnings := SortedWarnings(results)
	for i, w := range warnings {
		if i >= ro.MaxWarnings {
			fmt.Fprintf(ro.Stderr, "warning: ... and %d more\n", len(warnings)-i)
			break
		}
		fmt.Fprintln(ro.Stderr, "warning:", w)
	}
	stats := ComputeStats(results, tools)
	if err := writeOutputs(ro, tools, stats); err != nil {
		return nil, err
	}
	if journal != nil {
		if err := journal.Remove(); err != nil { // its results are in the catalog now
			return nil, err
		}
	}
	if ro.Out != "" {
		fmt.Fprintf(ro.Stderr, "wrote %d tools to %s\n", len(tools), ro.Out)
	}
	if err := WriteStatsTable(ro.Stdout, stats); err != nil {
		return nil, err
	}
	if err := WriteStatsJSON(ro.Stdout, ro.Provenance, stats); err != nil {
		return nil, err
	}
	return stats, nil
}

// ProbeJournalPath is where a crawl writing the catalog out keeps its probe results until the
// catalog is written: .NAME.probes.jsonl beside it.
func ProbeJournalPath(out string) string {
	return filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+".probes.jsonl")
}

// checkTargets refuses, before any work, an output that could never be written: a directory in
// place of the catalog or stats file, or both flags naming one file.
func checkTargets(out, statsOut string) error {
	flags := map[string]string{out: "--out", statsOut: "--stats-out"}
	for _, p := range []string{out, statsOut} {
		if p == "" {
			continue
		}
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return fmt.Errorf("%s %s: is a directory, want a file path", flags[p], p)
		}
	}
	if out != "" && statsOut != "" {
		a, errA := filepath.Abs(out)
		b, errB := filepath.Abs(statsOut)
		if errA == nil && errB == nil && a == b {
			return fmt.Errorf("--out and --stats-out both name %s: the catalog and its stats need two files", out)
		}
	}
	return nil
}

// writeOutputs writes the catalog and the stats file to temporary files first and puts both in
// place only when both are complete, as one set (a failed second rename gives the first its old
// content back), so neither a full disk nor a bad target leaves a new catalog beside old stats.
func writeOutputs(ro RunOptions, tools []catalog.Tool, stats []PlatformStats) error {
	var pending []*atomicfile.Pending
	defer func() {
		for _, p := range pending {
			p.Discard()
		}
	}()
	if ro.Out != "" {
		p, err := atomicfile.Prepare(ro.Out, func(w io.Writer) error { return catalog.EncodeJSONL(w, tools) })
		if err != nil {
			return fmt.Errorf("write catalog: %w", err)
		}
		pending = append(pending, p)
	}
	if ro.StatsOut != "" {
		p, err := atomicfile.Prepare(ro.StatsOut, func(w io.Writer) error { return WriteStatsJSON(w, ro.Provenance, stats) })
		if err != nil {
			return fmt.Errorf("write stats: %w", err)
		}
		pending = append(pending, p)
	}
	set := pending
	pending = nil // CommitAll discards what it does not put in place
	return atomicfile.CommitAll(set...)
}
