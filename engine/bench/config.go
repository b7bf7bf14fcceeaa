// Package bench implements algal.bench.v1: one workload measured by several
// systems (an admitted organism plus the executors that serve it), reported
// as content-addressed evidence with the Pareto set of the systems, and
// verified by recomputing every claim and replaying every receipt.
//
// The package owns the config, the report, the Pareto rule and
// verification; running an organism is delegated to a Runner (the VM) and
// reading stored evidence to an Evidence source, so the measurement layer
// stays independent of how runs execute.
package bench

import (
	"fmt"
	"path/filepath"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/expr"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
)

// Contract strings and bounds of the bench contracts.
const (
	ConfigContract = "algal.bench.config.v1"
	ReportContract = "algal.bench.v1"

	MaxSystems     = 8
	MaxCases       = 256
	MaxAxes        = 8
	MaxIDLen       = 64
	MaxConfigBytes = 1 << 20
	// AxisFuel is the fuel each axis evaluation gets.
	AxisFuel = evidence.ScorerFuel
)

// fail builds a rejection naming the field.
var fail = evidence.Fail

// Case is one workload case: interface args and the expected interface
// outputs.
type Case struct {
	ID     string
	Args   map[string]any
	Expect map[string]any
}

func (c Case) value() map[string]any {
	return map[string]any{"id": c.ID, "args": c.Args, "expect": c.Expect}
}

// System is one contender: an admitted manifest with an interface and the
// executor specs (name -> "scripted:<file>" | "replay:<dir>" | "cmd:<cmd>")
// a Runner resolves. Spec paths are already resolved against the config's
// directory.
type System struct {
	ID        string
	Manifest  *manifest.Manifest
	Executors map[string]string
}

// Price is dollars per million tokens.
type Price struct{ Input, Output float64 }

// Axis is a declared Pareto criterion over a system aggregate.
type Axis struct {
	Name string
	Dir  string // "up" or "down"
	Expr map[string]any
	prog *expr.Program
}

// Config is an admitted algal.bench.config.v1.
type Config struct {
	Cases   []Case
	Systems []System
	Prices  map[string]Price // nil when no price card was given
	Scorer  *evidence.Scorer // nil for exact match
	Axes    []Axis
}

// axisNames are the names an axis program may read: a system aggregate
// without its case list.
var axisNames = []string{"id", "manifestKey", "manifestDigest", "passed", "total", "effectCalls", "work", "usage", "attribution"}

// LoadConfig reads and admits a config file; manifest and scripted paths
// are relative to the file's directory.
func LoadConfig(path string) (*Config, error) {
	v, err := canon.ReadFile(path, MaxConfigBytes)
	if err != nil {
		return nil, err
	}
	cfg, err := ParseConfig(v, filepath.Dir(path), manifest.ReadFile)
	if err != nil {
		return nil, evidence.InConfigFile(path, err)
	}
	return cfg, nil
}

// ManifestLoader admits the manifest at a resolved path.
type ManifestLoader func(path string) (*manifest.Manifest, error)

// ParseConfig admits a decoded config. dir resolves relative paths; load
// admits each system manifest.
func ParseConfig(v any, dir string, load ManifestLoader) (*Config, error) {
	raw, err := evidence.Object(v, "config")
	if err != nil {
		return nil, err
	}
	if err := evidence.ClosedKeys(raw, "config", "contract", "cases", "systems", "prices", "scorer", "axes"); err != nil {
		return nil, err
	}
	if raw["contract"] != ConfigContract {
		return nil, fail(fault.Parse, "contract", "must be %s", ConfigContract)
	}
	cfg := &Config{}
	if cfg.Cases, err = parseCases(raw["cases"], "cases"); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	if cfg.Systems, err = evidence.Entries(raw["systems"], "systems", 1, MaxSystems, func(v any, field string) (System, error) {
		return parseSystemConfig(v, field, dir, load, seen)
	}); err != nil {
		return nil, err
	}
	if err := parseSettings(raw, true, &cfg.Prices, &cfg.Scorer, &cfg.Axes); err != nil {
		return nil, err
	}
	if err := checkInterfaces(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// parseSettings reads the optional members a config and its report share,
// prices, scorer and axes, in that order, into the places given. An
// absent member, or a null one where nullAbsent, leaves its place alone.
func parseSettings(raw map[string]any, nullAbsent bool, prices *map[string]Price, scorer **evidence.Scorer, axes *[]Axis) error {
	for _, m := range []struct {
		key   string
		parse func(v any) error
	}{
		{"prices", func(v any) (err error) { *prices, err = parsePrices(v, "prices"); return err }},
		{"scorer", func(v any) (err error) { *scorer, err = evidence.CompileScorer(v, "scorer"); return err }},
		{"axes", func(v any) (err error) { *axes, err = parseAxes(v, "axes"); return err }},
	} {
		v, ok := raw[m.key]
		if !ok || (nullAbsent && v == nil) {
			continue
		}
		if err := m.parse(v); err != nil {
			return err
		}
	}
	return nil
}

// parseSystemConfig admits one systems entry; seen holds the ids of the
// entries before it.
func parseSystemConfig(v any, field, dir string, load ManifestLoader, seen map[string]bool) (System, error) {
	s, err := evidence.Closed(v, field, "id", "manifest", "executors")
	if err != nil {
		return System{}, err
	}
	id, err := evidence.ID(s["id"], field+".id")
	if err != nil {
		return System{}, err
	}
	if seen[id] {
		return System{}, fail(fault.Parse, field+".id", "duplicate system id %q", id)
	}
	seen[id] = true
	m, err := loadSystemManifest(s["manifest"], field+".manifest", id, dir, load)
	if err != nil {
		return System{}, err
	}
	resolved, err := resolveExecutors(s["executors"], field, id, dir)
	if err != nil {
		return System{}, err
	}
	return System{ID: id, Manifest: m, Executors: resolved}, nil
}

// loadSystemManifest admits the manifest of system id at the path v
// holds, which must declare an interface.
func loadSystemManifest(v any, field, id, dir string, load ManifestLoader) (*manifest.Manifest, error) {
	path, ok := v.(string)
	if !ok || path == "" {
		return nil, fail(fault.Parse, field, "must be a path")
	}
	m, err := load(evidence.Resolve(dir, path))
	if err != nil {
		return nil, err
	}
	if m.Interface == nil {
		return nil, fail(fault.Parse, field, "system %q manifest must declare an interface", id)
	}
	return m, nil
}

// resolveExecutors resolves the executors of system id, at least one,
// each a spec under a name.
func resolveExecutors(v any, field, id, dir string) (map[string]string, error) {
	execs, err := evidence.Object(v, field+".executors")
	if err != nil {
		return nil, err
	}
	if len(execs) == 0 {
		return nil, fail(fault.Parse, field+".executors", "system %q needs at least one executor", id)
	}
	resolved := make(map[string]string, len(execs))
	// Sorted, so the first bad entry named is the same on every run.
	for _, name := range canon.SortedKeys(execs) {
		at := fmt.Sprintf("%s.executors[%q]", field, name)
		str, ok := execs[name].(string)
		if name == "" || len(name) > MaxIDLen || !ok {
			return nil, fail(fault.Parse, at, "must be a non-empty spec string under a name of at most %d characters", MaxIDLen)
		}
		if resolved[name], err = effect.ResolveSpec(str, dir, effect.InConfig); err != nil {
			return nil, fail(fault.Parse, at, "%v", err)
		}
	}
	return resolved, nil
}

func parseCases(v any, field string) ([]Case, error) {
	raw, err := evidence.ParseCases(v, field, MaxCases)
	if err != nil {
		return nil, err
	}
	cases := make([]Case, len(raw))
	for i, c := range raw {
		cases[i] = Case{ID: c.ID, Args: c.Args, Expect: c.Expect}
	}
	return cases, nil
}

func parsePrices(v any, field string) (map[string]Price, error) {
	return evidence.Keyed(v, field, "price", parsePrice)
}

func parsePrice(v any, at string) (Price, error) {
	p, err := evidence.Closed(v, at, "input", "output")
	if err != nil {
		return Price{}, err
	}
	in, err := evidence.NonNegative(p["input"], at+".input")
	if err != nil {
		return Price{}, err
	}
	out, err := evidence.NonNegative(p["output"], at+".output")
	if err != nil {
		return Price{}, err
	}
	return Price{Input: in, Output: out}, nil
}

func parseAxes(v any, field string) ([]Axis, error) {
	raw, err := evidence.List(v, field, 1, MaxAxes)
	if err != nil {
		return nil, fail(fault.AxisInvalid, field, "%s", fault.MessageOf(err))
	}
	axes := make([]Axis, 0, len(raw))
	seen := map[string]bool{}
	for i, ra := range raw {
		a, err := parseAxis(ra, fmt.Sprintf("%s[%d]", field, i), seen)
		if err != nil {
			return nil, err
		}
		axes = append(axes, a)
	}
	return axes, nil
}

// parseAxis reads one axis; seen holds the names of the axes before it.
func parseAxis(v any, at string, seen map[string]bool) (Axis, error) {
	a, err := evidence.Closed(v, at, "name", "dir", "expr")
	if err != nil {
		return Axis{}, err
	}
	name, err := evidence.ID(a["name"], at+".name")
	if err != nil {
		return Axis{}, err
	}
	if seen[name] {
		return Axis{}, fail(fault.Parse, at+".name", "duplicate axis name %q", name)
	}
	seen[name] = true
	dir, _ := a["dir"].(string)
	if dir != "up" && dir != "down" {
		return Axis{}, fail(fault.Parse, at+".dir", `must be "up" or "down"`)
	}
	env, prog, err := evidence.CompileEnvelope(a["expr"], at+".expr", axisNames, fault.AxisInvalid)
	if err != nil {
		return Axis{}, err
	}
	return Axis{Name: name, Dir: dir, Expr: env, prog: prog}, nil
}

// checkInterfaces: every case's args name interface inputs of every
// system, and expect names exactly the interface outputs.
func checkInterfaces(cfg *Config) error {
	for _, s := range cfg.Systems {
		inputs := portNames(s.Manifest.Interface.Inputs)
		outputs := portNames(s.Manifest.Interface.Outputs)
		for _, c := range cfg.Cases {
			if err := checkCaseInterface(s, c, inputs, outputs); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkCaseInterface checks case c against system s's interface, whose
// input and output names are given.
func checkCaseInterface(s System, c Case, inputs, outputs map[string]bool) error {
	for _, name := range canon.SortedKeys(c.Args) {
		if !inputs[name] {
			return fail(fault.Parse, "cases["+c.ID+"].args", "system %q has no interface input %q", s.ID, name)
		}
	}
	for _, p := range s.Manifest.Interface.Outputs {
		if _, ok := c.Expect[p.Name]; !ok {
			return fail(fault.Parse, "cases["+c.ID+"].expect", "missing expected output %q of system %q", p.Name, s.ID)
		}
	}
	for _, name := range canon.SortedKeys(c.Expect) {
		if !outputs[name] {
			return fail(fault.Parse, "cases["+c.ID+"].expect", "system %q has no interface output %q", s.ID, name)
		}
	}
	return nil
}

func portNames(ports []manifest.InterfacePort) map[string]bool {
	names := make(map[string]bool, len(ports))
	for _, p := range ports {
		names[p.Name] = true
	}
	return names
}
