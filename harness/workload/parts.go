package workload

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
)

// A bench workload larger than one algal.bench.v1 config (at most
// bench.MaxCases cases and bench.MaxSystems systems) runs in parts: the
// case list cut into consecutive chunks of PartCases, the system list into
// consecutive groups of PartSystems, one part per chunk and group, chunk
// by chunk. Each part is an ordinary bench config and report that
// verifies on its own; the run directory adds one aggregate
// (aggregate.json) summing every system over its parts, with the Pareto
// set over the sums. The split depends only on the counts, so the same
// workload always splits the same way, and appending cases changes only
// the last chunk's parts.
//
// A workload that fits one config is one part and keeps the run directory
// of a single report (config.json, report.json, ...).
const (
	MaxBenchCases   = 20000
	MaxBenchSystems = 64
	PartCases       = bench.MaxCases
	PartSystems     = bench.MaxSystems

	// AggregateFile is the run directory's aggregate of a bench run in
	// parts, written by the verify phase from the verified parts.
	AggregateFile = "aggregate.json"
	// AggregateContract names aggregate.json's format.
	AggregateContract = "assay.bench.aggregate.v1"
)

// Part is one part of a bench workload: cases [CaseFrom, CaseTo) and
// systems [SystemFrom, SystemTo) in workload order.
type Part struct {
	N                    int // 1-based, in run order
	CaseFrom, CaseTo     int
	SystemFrom, SystemTo int
}

// Name is the part's name, the prefix of its files: part-0001.
func (p Part) Name() string { return fmt.Sprintf("part-%04d", p.N) }

// ConfigFile is the part's algal.bench.config.v1 in the run directory.
func (p Part) ConfigFile() string { return p.Name() + "-config.json" }

// ReportFile is the part's algal.bench.v1 report in the run directory.
func (p Part) ReportFile() string { return p.Name() + "-report.json" }

// ScriptedFile is the part's table compiled from its cases' responses
// for one executor.
func (p Part) ScriptedFile(executor string) string {
	return p.Name() + "-scripted-" + executor + ".json"
}

// Parts splits a bench workload into its parts (nil for a foundry).
func (w *Workload) Parts() []Part {
	if w.Kind != KindBench {
		return nil
	}
	var out []Part
	cases := w.NumCases()
	for cf := 0; cf < cases || cf == 0; cf += PartCases {
		for sf := 0; sf < len(w.Systems) || sf == 0; sf += PartSystems {
			out = append(out, Part{N: len(out) + 1, CaseFrom: cf, CaseTo: min(cf+PartCases, cases),
				SystemFrom: sf, SystemTo: min(sf+PartSystems, len(w.Systems))})
		}
	}
	return out
}

// InParts reports whether w runs in more than one part.
func (w *Workload) InParts() bool {
	return w.Kind == KindBench && (w.NumCases() > PartCases || len(w.Systems) > PartSystems)
}

// partView is w restricted to one part's cases and systems: what the
// part's config and tables are compiled from. It shares w's maps.
func (w *Workload) PartView(p Part) *Workload {
	v := *w
	v.Cases = w.Cases[p.CaseFrom:p.CaseTo]
	v.Systems = w.Systems[p.SystemFrom:p.SystemTo]
	return &v
}

// partExecutors lists, sorted, the executors served from case responses
// that a part's systems use.
func (w *Workload) partExecutors(p Part) []string {
	seen := map[string]bool{}
	for _, s := range w.Systems[p.SystemFrom:p.SystemTo] {
		for _, e := range s.Executors {
			if e.FromCases() {
				seen[e.Name] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// compileParts compiles every part of a workload in parts: each part's
// tables (their digests join the run's identity) and its config, admitted
// by the engine with rejections mapped back into the workload file.
func (c *Compiled) compileParts(inputs map[string]any, loader func(string) (*manifest.Manifest, error)) error {
	w := c.Workload
	cached := map[string]*manifest.Manifest{}
	load := func(path string) (*manifest.Manifest, error) {
		if m, ok := cached[path]; ok {
			return m, nil
		}
		m, err := loader(path)
		if err == nil {
			cached[path] = m
		}
		return m, err
	}
	if w.UsesLive() {
		// Recording and replay bookkeeping work on one report; a live
		// workload this large would also be a very large bill.
		return errAt(w.pos, "systems", "this workload runs in parts (%d cases, %d systems; one part holds at most %d cases and %d systems), and live backends (openai:) are not supported in a run in parts yet; run the live systems in a workload of at most %d cases and %d systems", len(w.Cases), len(w.Systems), PartCases, PartSystems, PartCases, PartSystems)
	}
	if w.Repeats > 1 {
		return errAt(w.pos, "repeats", "this workload runs in parts (%d cases, %d systems; one part holds at most %d cases and %d systems), and repeats are not supported in a run in parts yet; repeat a workload of at most %d cases and %d systems", len(w.Cases), len(w.Systems), PartCases, PartSystems, PartCases, PartSystems)
	}
	c.Parts = w.Parts()
	for _, p := range c.Parts {
		pw := w.PartView(p)
		for _, name := range w.partExecutors(p) {
			b, err := pw.scriptedTable(pw.Cases, name)
			if err != nil {
				return err
			}
			inputs[p.ScriptedFile(name)] = canon.DigestBytes(b)
		}
		cfg := pw.config(func(s string) string { return s }, func(name string) string { return filepath.Join(w.Dir, p.ScriptedFile(name)) })
		if _, err := bench.ParseConfig(cfg, w.Dir, load); err != nil {
			return w.partError(p, err)
		}
		b, err := pw.configBytes(func(s string) string { return rel(w.Dir, s) }, p.ScriptedFile)
		if err != nil {
			return err
		}
		c.partIdentity = append(c.partIdentity, canon.DigestBytes(b))
	}
	return nil
}

var partIndex = regexp.MustCompile(`^(cases|systems)\[(\d+)\]`)

// partError maps an engine rejection of one part's config to the
// workload: its cases[i] and systems[i] are the part's, so they are
// shifted to the workload's numbering before being positioned.
func (w *Workload) partError(p Part, err error) error {
	f, ok := fault.As(err)
	if !ok || f.Code == CodeWorkload {
		return err
	}
	if f.Path == "" {
		return errAt(w.pos, "", "%s: %v", p.Name(), err)
	}
	shifted := *f
	shifted.Path = partIndex.ReplaceAllStringFunc(f.Path, func(m string) string {
		sub := partIndex.FindStringSubmatch(m)
		i, _ := strconv.Atoi(sub[2])
		if sub[1] == "cases" {
			i += p.CaseFrom
		} else {
			i += p.SystemFrom
		}
		return fmt.Sprintf("%s[%d]", sub[1], i)
	})
	return w.engineError(&shifted)
}

// PartFiles are the files one part's run starts from, by basename, as
// written to the run directory: its config (paths relative to the run
// directory) and the tables compiled from its cases' responses.
func (c *Compiled) PartFiles(p Part) (map[string][]byte, error) {
	w := c.Workload
	pw := w.PartView(p)
	out := map[string][]byte{}
	for _, name := range w.partExecutors(p) {
		b, err := pw.scriptedTable(pw.Cases, name)
		if err != nil {
			return nil, err
		}
		out[p.ScriptedFile(name)] = append(b, '\n')
	}
	b, err := pw.configBytes(func(s string) string { return rel(c.RunDir, s) }, p.ScriptedFile)
	if err != nil {
		return nil, err
	}
	out[p.ConfigFile()] = append(b, '\n')
	return out, nil
}

// partConfig admits one part's config with absolute paths: what a part's
// report must have been made from.
func (c *Compiled) PartConfig(p Part, load bench.ManifestLoader) (*bench.Config, error) {
	w := c.Workload
	pw := w.PartView(p)
	cfg := pw.config(func(s string) string { return s }, func(name string) string { return filepath.Join(w.Dir, p.ScriptedFile(name)) })
	return bench.ParseConfig(cfg, w.Dir, load)
}
