// Package foundry implements algal.foundry.v1: selecting one organism from
// a bounded population (candidate files or the output of a generator
// organism) by measured evidence over a split workload. Train and
// validation cases are run for every candidate and decide the promotion;
// holdout cases run exactly once, on the promoted candidate only. The
// report is content-addressed evidence that verification recomputes claim
// by claim and replays receipt by receipt. An optional habitat budget
// (algal.habitat-budget.v1) bounds the whole activity.
//
// Running organisms is delegated to an evidence.Runner and reading stored
// evidence to an evidence.Store, as in bench, so the package does not
// depend on the VM.
package foundry

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
)

// Contract strings and bounds of the foundry contracts.
const (
	ConfigContract = "algal.foundry.config.v1"
	ReportContract = "algal.foundry.v1"

	MaxCandidates  = 32
	MaxCases       = 256
	MaxIDLen       = 64
	MaxConfigBytes = 1 << 20
)

// Split names.
const (
	SplitTrain      = "train"
	SplitValidation = "validation"
	SplitHoldout    = "holdout"
)

// splits are the split names in workload order.
var splits = []string{SplitTrain, SplitValidation, SplitHoldout}

// fail builds a rejection naming the field.
var fail = evidence.Fail

// Case is one workload case.
type Case struct {
	ID     string
	Split  string
	Args   map[string]any
	Expect map[string]any
}

// Generator is an organism whose interface output proposes the candidate
// population.
type Generator struct {
	Manifest *manifest.Manifest
	// Args are interface args.
	Args map[string]any
	// Output names the interface output holding the list, or an object
	// holding it under Field when Field is set.
	Output string
	Field  string
	// Executors serve the generator; nil means the config's executors.
	Executors map[string]string
}

// Limits are a habitat budget's ceilings for the whole activity.
type Limits struct{ Work, Attempts, Runs int64 }

// Config is an admitted algal.foundry.config.v1.
type Config struct {
	// Candidates are the file candidates in config order; a generator
	// appends its population after them when the foundry runs.
	Candidates []*manifest.Manifest
	Generator  *Generator
	Cases      []Case
	Scorer     *evidence.Scorer // nil for exact match
	// Budget is nil when the config declares no habitat budget.
	Budget *Limits
	// Executors serve every candidate (name -> resolved spec). Upstream
	// configs carry none: the host supplies them, so a caller may fill
	// this in before Run.
	Executors map[string]string
	// Warnings are admission findings that do not reject the config, such
	// as the same args appearing in two splits.
	Warnings []string
	// Search is the search block, admitted only in search mode
	// (AdmitOptions.Search); see search_config.go.
	Search *SearchSettings
}

// AdmitOptions tune admission.
type AdmitOptions struct {
	// StrictSplits turns split leakage (identical args in two splits)
	// from a warning into a rejection.
	StrictSplits bool
	// Search admits a config for generational search (`foundry search`):
	// the search block becomes legal and required, and the checks of
	// search_config.go apply. Outside search mode a search block is
	// rejected, as upstream does.
	Search bool
}

// ManifestLoader admits the manifest at a resolved path.
type ManifestLoader func(path string) (*manifest.Manifest, error)

func requireKeys(m map[string]any, field string, keys ...string) error {
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return fail(fault.Parse, field, "missing %q", k)
		}
	}
	return nil
}

// LoadConfig reads and admits a config file; manifest and executor paths
// are relative to the file's directory.
func LoadConfig(path string, opts AdmitOptions) (*Config, error) {
	v, err := canon.ReadFile(path, MaxConfigBytes)
	if err != nil {
		return nil, err
	}
	cfg, err := ParseConfig(v, filepath.Dir(path), manifest.ReadFile, opts)
	if err != nil {
		return nil, evidence.InConfigFile(path, err)
	}
	return cfg, nil
}

// ParseConfig admits a decoded config. dir resolves relative paths; load
// admits each candidate and generator manifest.
func ParseConfig(v any, dir string, load ManifestLoader, opts AdmitOptions) (*Config, error) {
	raw, err := evidence.Object(v, "config")
	if err != nil {
		return nil, err
	}
	if err := checkConfigShape(raw, opts); err != nil {
		return nil, err
	}
	a := &admission{cfg: &Config{}, dir: dir, load: load, opts: opts}
	for _, step := range configSteps {
		member := raw[step.key]
		if member == nil && step.optional {
			continue
		}
		if err := step.admit(a, member); err != nil {
			return nil, err
		}
	}
	if err := a.complete(); err != nil {
		return nil, err
	}
	return a.cfg, nil
}

// checkConfigShape checks the config's keys and contract.
func checkConfigShape(raw map[string]any, opts AdmitOptions) error {
	if _, ok := raw["search"]; ok && !opts.Search {
		return fail(fault.Parse, "search", "search settings require the foundry search command (assay foundry search CONFIG)")
	}
	if err := evidence.ClosedKeys(raw, "config", "contract", "candidates", "generator", "cases", "scorer", "budget", "executors", "search"); err != nil {
		return err
	}
	if raw["contract"] != ConfigContract {
		return fail(fault.Parse, "contract", "must be %s", ConfigContract)
	}
	return nil
}

// admission is a config being admitted, member by member.
type admission struct {
	cfg  *Config
	dir  string
	load ManifestLoader
	opts AdmitOptions
}

// configSteps admit the config's members in order: the contract-level
// checks come before any file is read. An optional member is skipped
// when it is absent or null.
var configSteps = []struct {
	key      string
	optional bool
	admit    func(a *admission, v any) error
}{
	{"scorer", true, (*admission).scorer},
	{"budget", true, (*admission).budget},
	{"search", false, (*admission).search},
	{"cases", false, (*admission).cases},
	{"executors", true, (*admission).executors},
	{"candidates", true, (*admission).candidates},
	{"generator", true, (*admission).generator},
}

func (a *admission) scorer(v any) (err error) {
	a.cfg.Scorer, err = evidence.CompileScorer(v, "scorer")
	return err
}

func (a *admission) budget(v any) error {
	l, err := parseLimits(v, "budget")
	if err != nil {
		return err
	}
	a.cfg.Budget = &l
	return nil
}

// search admits the search block's own shape, in search mode only.
func (a *admission) search(v any) (err error) {
	if !a.opts.Search {
		return nil
	}
	a.cfg.Search, err = parseSearch(v, a.cfg.Budget != nil)
	return err
}

// cases admits the workload and looks for cases leaking between splits.
func (a *admission) cases(v any) (err error) {
	if a.cfg.Cases, err = parseCases(v, "cases"); err != nil {
		return err
	}
	a.cfg.Warnings, err = leakage(a.cfg.Cases, a.opts.StrictSplits)
	return err
}

func (a *admission) executors(v any) (err error) {
	a.cfg.Executors, err = parseExecutors(v, "executors", a.dir)
	return err
}

// candidates loads each candidate file, once, and checks it against the
// cases.
func (a *admission) candidates(v any) error {
	entries, err := evidence.List(v, "candidates", 0, MaxCandidates)
	if err != nil {
		return err
	}
	seen := map[string]int{}
	for i, e := range entries {
		at := fmt.Sprintf("candidates[%d]", i)
		m, err := a.loadFile(e, at)
		if err != nil {
			return err
		}
		if j, dup := seen[m.Digest]; dup {
			return fail(fault.Parse, at, "duplicate candidate %s (same manifest as candidates[%d])", m.Digest, j)
		}
		seen[m.Digest] = i
		if err := compatible(m, a.cfg.Cases, at); err != nil {
			return err
		}
		a.cfg.Candidates = append(a.cfg.Candidates, m)
	}
	return nil
}

// loadFile admits the manifest at the path v holds, relative to the
// config's directory.
func (a *admission) loadFile(v any, field string) (*manifest.Manifest, error) {
	path, err := evidence.Text(v, field, 4096)
	if err != nil {
		return nil, err
	}
	return a.load(evidence.Resolve(a.dir, path))
}

func (a *admission) generator(v any) (err error) {
	a.cfg.Generator, err = parseGenerator(v, a.dir, a.load)
	return err
}

// complete checks what the config needs as a whole: a population, and in
// search mode a generator that takes the feedback.
func (a *admission) complete() error {
	if len(a.cfg.Candidates) == 0 && a.cfg.Generator == nil {
		return fail(fault.Parse, "config", "needs candidates or a generator")
	}
	if a.cfg.Search != nil {
		return checkSearchGenerator(a.cfg)
	}
	return nil
}

func parseExecutors(v any, field, dir string) (map[string]string, error) {
	raw, err := evidence.Object(v, field)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(raw))
	for _, name := range canon.SortedKeys(raw) {
		at := fmt.Sprintf("%s[%q]", field, name)
		spec, ok := raw[name].(string)
		if name == "" || len(name) > MaxIDLen || !ok {
			return nil, fail(fault.Parse, at, "must be a spec string under a name of 1 to %d characters", MaxIDLen)
		}
		if out[name], err = effect.ResolveSpec(spec, dir, effect.InConfig); err != nil {
			return nil, fail(fault.Parse, at, "%v", err)
		}
	}
	return out, nil
}

func parseGenerator(v any, dir string, load ManifestLoader) (*Generator, error) {
	raw, err := evidence.Object(v, "generator")
	if err != nil {
		return nil, err
	}
	if err := evidence.ClosedKeys(raw, "generator", "manifest", "args", "output", "field", "executors"); err != nil {
		return nil, err
	}
	path, err := evidence.Text(raw["manifest"], "generator.manifest", 4096)
	if err != nil {
		return nil, err
	}
	g, err := generatorSettings(raw, dir)
	if err != nil {
		return nil, err
	}
	if g.Manifest, err = load(evidence.Resolve(dir, path)); err != nil {
		return nil, err
	}
	if err := checkGeneratorInterface(g); err != nil {
		return nil, err
	}
	return g, nil
}

// generatorSettings reads what a generator is run with and which output
// holds its proposals.
func generatorSettings(raw map[string]any, dir string) (g *Generator, err error) {
	g = &Generator{}
	if g.Args, err = evidence.Object(raw["args"], "generator.args"); err != nil {
		return nil, err
	}
	if g.Output, err = evidence.Text(raw["output"], "generator.output", MaxIDLen); err != nil {
		return nil, err
	}
	if f := raw["field"]; f != nil {
		if g.Field, err = evidence.Text(f, "generator.field", MaxIDLen); err != nil {
			return nil, err
		}
	}
	if ex := raw["executors"]; ex != nil {
		if g.Executors, err = parseExecutors(ex, "generator.executors", dir); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// checkGeneratorInterface checks that the generator's manifest declares
// the output it proposes through and every input it is given.
func checkGeneratorInterface(g *Generator) error {
	m := g.Manifest
	if m.Interface == nil {
		return fail(fault.Parse, "generator.manifest", "generator %s must declare an interface", m.Key)
	}
	if !slices.ContainsFunc(m.Interface.Outputs, func(p manifest.InterfacePort) bool { return p.Name == g.Output }) {
		return fail(fault.Parse, "generator.output", "generator %s has no interface output %q", m.Key, g.Output)
	}
	for _, name := range canon.SortedKeys(g.Args) {
		if !hasInput(m, name) {
			return fail(fault.Parse, "generator.args", "generator %s has no interface input %q", m.Key, name)
		}
	}
	return nil
}

func hasInput(m *manifest.Manifest, name string) bool {
	for _, p := range m.Interface.Inputs {
		if p.Name == name {
			return true
		}
	}
	return false
}

func parseCases(v any, field string) ([]Case, error) {
	raw, err := evidence.ParseCases(v, field, MaxCases, "split")
	if err != nil {
		return nil, err
	}
	cases := make([]Case, len(raw))
	seen := map[string]bool{}
	for i, c := range raw {
		split, _ := c.Object["split"].(string)
		if !slices.Contains(splits, split) {
			return nil, fail(fault.Parse, fmt.Sprintf("%s[%d].split", field, i), "must be train, validation or holdout")
		}
		seen[split] = true
		cases[i] = Case{ID: c.ID, Split: split, Args: c.Args, Expect: c.Expect}
	}
	for _, s := range splits {
		if !seen[s] {
			return nil, fail(fault.Parse, field, "needs at least one %s case", s)
		}
	}
	return cases, nil
}

// leakage finds cases whose canonical args appear in more than one split:
// a model tuned on train could then be scored on what it has seen.
func leakage(cases []Case, strict bool) ([]string, error) {
	type first struct{ id, split string }
	seen := map[string]first{}
	reported := map[string]bool{}
	var warnings []string
	for _, c := range cases {
		b, err := canon.Encode(c.Args)
		if err != nil {
			return nil, err
		}
		k := string(b)
		f, ok := seen[k]
		if !ok {
			seen[k] = first{c.ID, c.Split}
			continue
		}
		if f.split == c.Split || reported[k+"\x00"+c.Split] {
			continue
		}
		reported[k+"\x00"+c.Split] = true
		msg := fmt.Sprintf("split leakage: cases %q (%s) and %q (%s) have identical args", f.id, f.split, c.ID, c.Split)
		if strict {
			return nil, fail(fault.Parse, "cases["+c.ID+"].args", "%s", msg)
		}
		warnings = append(warnings, msg)
	}
	return warnings, nil
}

// compatible: every case's args name interface inputs of m, and expect
// names exactly its interface outputs.
func compatible(m *manifest.Manifest, cases []Case, at string) error {
	if m.Interface == nil {
		return fail(fault.Parse, at, "candidate %s must declare an interface", m.Key)
	}
	outputs := map[string]bool{}
	for _, p := range m.Interface.Outputs {
		outputs[p.Name] = true
	}
	for _, c := range cases {
		for _, name := range canon.SortedKeys(c.Args) {
			if !hasInput(m, name) {
				return fail(fault.Parse, at, "case %q: candidate %s has no interface input %q", c.ID, m.Key, name)
			}
		}
		for _, p := range m.Interface.Outputs {
			if _, ok := c.Expect[p.Name]; !ok {
				return fail(fault.Parse, at, "case %q: missing expected output %q of candidate %s", c.ID, p.Name, m.Key)
			}
		}
		for _, name := range canon.SortedKeys(c.Expect) {
			if !outputs[name] {
				return fail(fault.Parse, at, "case %q: candidate %s has no interface output %q", c.ID, m.Key, name)
			}
		}
	}
	return nil
}
