package workload

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/internal/suggest"
	"gopkg.in/yaml.v3"
)

// Kind is a workload's kind, taken from its file name.
type Kind string

// Workload kinds and the file suffixes that declare them.
const (
	KindBench   Kind = "bench"
	KindFoundry Kind = "foundry"

	BenchSuffix   = ".bench.yaml"
	FoundrySuffix = ".foundry.yaml"
	// The .yml spellings are accepted alike.
	BenchSuffixYML   = ".bench.yml"
	FoundrySuffixYML = ".foundry.yml"
)

// CasesExecutor is the executor spec that serves a system (or the foundry
// population) from the scripted responses its cases carry.
const CasesExecutor = "cases"

// QueueTag marks a response that serves several calls of one cell within
// one case, in order: `draft: !queue [first, second]`.
const QueueTag = "!queue"

// RepeatsTag marks a response that differs per repeat: one entry per
// repeat, in repeat order, each a plain value or a !queue
// (`route: !repeats [billing, billing, spam]`); see repeats.go.
const RepeatsTag = "!repeats"

// maxWorkloadBytes bounds a workload or case file.
const maxWorkloadBytes = 4 << 20

var (
	idPattern       = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	executorPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
)

// Workload is a parsed workload file. Paths are resolved against the
// file's directory.
type Workload struct {
	Path        string
	Dir         string
	Kind        Kind
	Name        string
	Revision    int
	Description string
	// Repeats is how many times every contender runs every case, as
	// independent samples (1..MaxRepeats; 1 when not written).
	Repeats int

	// Bench only.
	Systems []System
	// Prices is the contract's price card (each model's input and output
	// rates); CacheRates holds the prompt-cache rates of the models that
	// declare cache-read or cache-write, which the contract's card cannot
	// carry (see CacheTally).
	Prices     map[string]any
	CacheRates map[string]CacheRate
	Axes       []Axis

	// Foundry only.
	Candidates []Ref
	Generator  *Generator
	Executors  []Executor
	Budget     map[string]any

	// Backends are the live model servers live specs (<api>:<name>) reach.
	Backends []Backend

	// Cases are nil once released (Release): NumCases and CaseID answer
	// for them then.
	Cases []Case
	// released is what Release kept of the cases.
	released *released
	// CaseFiles are the case files the workload includes (`- file:`),
	// resolved, in the order read: with Path and the Refs they are every
	// file the workload reads.
	CaseFiles []string
	// Usage declares, per executor served from case responses, the token
	// usage each cell's answers report: {executor: {cell: {model?,
	// tokensIn?, tokensOut?}}}. It compiles into the table's "$usage".
	Usage  map[string]any
	Scorer any // the algal.expr.v1 program; nil for exact match
	Gate   Gate
	// Compare is how the PR check tests base against head (compare.go).
	Compare Compare

	// positions maps config paths (as the engine names fields) to where
	// they were written, so engine rejections point into the YAML (a
	// case's own positions are in the case: casePosition).
	positions map[string]Pos
	// loading is what Parse needs while it reads the cases.
	loading *loadState
	pos     Pos
	namePos Pos // where name: was written, for duplicate-name errors
}

// Ref is a path written in a workload, resolved, with its position.
type Ref struct {
	Path    string // resolved
	Written string // as written
	Pos     Pos
}

// Executor is one named executor spec.
type Executor struct {
	Name string
	// Spec is "cases", or scripted:/replay:/cmd: with the path resolved
	// against the workload directory.
	Spec    string
	Written string
	Pos     Pos
}

// FromCases reports whether the executor is compiled from case responses.
func (e Executor) FromCases() bool { return e.Spec == CasesExecutor }

// System is one bench contender.
type System struct {
	ID        string
	Manifest  Ref
	Executors []Executor
	Pos       Pos
}

// Axis is one declared Pareto criterion.
type Axis struct {
	Name, Dir string
	Program   any
	Pos       Pos
}

// Generator proposes a foundry population.
type Generator struct {
	Manifest  Ref
	Args      map[string]any
	Output    string
	Field     string
	Executors []Executor
	Pos       Pos
}

// Case is one workload case. Its args, expectation and responses are
// held packed (workload_case.go) and decoded by Args, Expect and
// Responses.
type Case struct {
	ID    string
	Split string // foundry only
	// PerRepeat are the responses tagged !repeats: for those cells,
	// Responses holds repeat 1's values.
	PerRepeat []RepeatResponse
	Pos       Pos
	data      caseData
}

// Load reads and checks a workload file. The kind comes from the suffix
// (.bench.yaml or .foundry.yaml).
func Load(path string) (*Workload, error) {
	kind, ok := KindOf(path)
	if !ok {
		return nil, &fault.Error{Code: CodeWorkload, File: path, Message: fmt.Sprintf("a workload file name ends in %s or %s (or .yml)", BenchSuffix, FoundrySuffix)}
	}
	data, err := readBounded(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, kind, data)
}

// KindOf names the workload kind a file name declares.
func KindOf(path string) (Kind, bool) {
	switch base := filepath.Base(path); {
	case strings.HasSuffix(base, BenchSuffix), strings.HasSuffix(base, BenchSuffixYML):
		return KindBench, true
	case strings.HasSuffix(base, FoundrySuffix), strings.HasSuffix(base, FoundrySuffixYML):
		return KindFoundry, true
	}
	return "", false
}

// FileStem is a workload file's base name without its kind suffix
// (ticket-triage for suites/ticket-triage.bench.yml), or "" when the name
// carries no workload suffix.
func FileStem(path string) string {
	base := filepath.Base(path)
	for _, suf := range []string{BenchSuffix, BenchSuffixYML, FoundrySuffix, FoundrySuffixYML} {
		if stem, ok := strings.CutSuffix(base, suf); ok {
			return stem
		}
	}
	return ""
}

func readBounded(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, &fault.Error{Code: CodeWorkload, File: path, Message: "cannot read: " + unwrapPathError(err) + suggest.File("", path)}
	}
	if !st.Mode().IsRegular() {
		return nil, &fault.Error{Code: CodeWorkload, File: path, Message: "is not a regular file"}
	}
	if st.Size() > maxWorkloadBytes {
		return nil, &fault.Error{Code: CodeWorkload, File: path, Message: fmt.Sprintf("is %d bytes, over the %d-byte bound", st.Size(), maxWorkloadBytes)}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &fault.Error{Code: CodeWorkload, File: path, Message: "cannot read: " + unwrapPathError(err)}
	}
	return data, nil
}

func unwrapPathError(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

var (
	benchKeys   = []string{"name", "revision", "description", "repeats", "systems", "backends", "cases", "usage", "scorer", "axes", "prices", "gate", "compare"}
	foundryKeys = []string{"name", "revision", "description", "repeats", "candidates", "generator", "executors", "backends", "cases", "usage", "scorer", "budget", "gate", "compare"}
)

// Parse checks a workload's bytes; path names it in errors and anchors
// relative paths.
func Parse(path string, kind Kind, data []byte) (*Workload, error) {
	shown := displayPath(path)
	d := &decoder{file: shown}
	root, err := parseYAML(shown, data)
	if err != nil {
		return nil, err
	}
	allowed := benchKeys
	required := []string{"name", "revision", "systems", "cases"}
	if kind == KindFoundry {
		allowed = foundryKeys
		required = []string{"name", "revision", "cases"}
	}
	f, _, err := d.mapping(root, "", allowed, required)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, &fault.Error{Code: CodeWorkload, File: path, Message: err.Error()}
	}
	w := &Workload{Path: path, Dir: dir, Kind: kind, positions: map[string]Pos{}, pos: d.pos(root)}
	defer func() { w.loading = nil }()
	for _, step := range parseSteps {
		if err := step(w, d, f); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// parseSteps read a workload's top-level keys, in this order: the cases
// are read once every contender is declared (their answers are checked
// against their cells' contracts as each case is read), the gate once
// the cases are, and the cross-checks last.
var parseSteps = []func(w *Workload, d *decoder, f map[string]field) error{
	(*Workload).parseHeader,
	(*Workload).parseRepeats,
	(*Workload).parseCompare,
	(*Workload).parseBackendsKey,
	(*Workload).parseContenders,
	(*Workload).parseUsage,
	(*Workload).parsePricesAgainstUsage,
	(*Workload).parseScorer,
	(*Workload).parseCaseList,
	(*Workload).parseGateKey,
	func(w *Workload, _ *decoder, _ map[string]field) error { return w.checkPerRepeat() },
	func(w *Workload, _ *decoder, _ map[string]field) error { return w.checkReferences() },
	func(w *Workload, _ *decoder, _ map[string]field) error { return w.checkManifests() },
}

// parseHeader reads name, revision and description.
func (w *Workload) parseHeader(d *decoder, f map[string]field) error {
	var err error
	if w.Name, err = d.str(f["name"].value, "name"); err != nil {
		return err
	}
	w.namePos = d.pos(f["name"].value)
	if !idPattern.MatchString(w.Name) || len(w.Name) > 64 {
		return d.fail(f["name"].value, "name", "must be an id: lowercase letters and digits in hyphen-separated segments, at most 64 characters")
	}
	if w.Revision, err = d.integer(f["revision"].value, "revision", 0, 1<<31-1); err != nil {
		return err
	}
	if x, ok := f["description"]; ok {
		w.Description, err = d.str(x.value, "description")
	}
	return err
}

// parseBackendsKey reads backends:, when written.
func (w *Workload) parseBackendsKey(d *decoder, f map[string]field) error {
	if x, ok := f["backends"]; ok {
		return w.parseBackends(d, x.value)
	}
	return nil
}

// parseContenders reads what is measured: a bench's systems, prices and
// axes, or a foundry's candidates, generator, executors and budget.
func (w *Workload) parseContenders(d *decoder, f map[string]field) error {
	if w.Kind != KindBench {
		return w.parseFoundry(d, f)
	}
	if err := w.parseSystems(d, f["systems"].value); err != nil {
		return err
	}
	if x, ok := f["prices"]; ok {
		var err error
		if w.Prices, w.CacheRates, err = parsePriceCard(d, x.value); err != nil {
			return err
		}
		w.positions["prices"] = d.pos(x.value)
	}
	if x, ok := f["axes"]; ok {
		return w.parseAxes(d, x.value)
	}
	return nil
}

// parseUsage reads usage:, when written.
func (w *Workload) parseUsage(d *decoder, f map[string]field) error {
	x, ok := f["usage"]
	if !ok {
		return nil
	}
	var err error
	if w.Usage, err = d.object(x.value, "usage"); err != nil {
		return err
	}
	w.positions["usage"] = d.pos(x.value)
	return nil
}

// parsePricesAgainstUsage checks a bench's price card against the models
// its usage: block reports.
func (w *Workload) parsePricesAgainstUsage(d *decoder, f map[string]field) error {
	x, ok := f["prices"]
	if !ok || w.Kind != KindBench {
		return nil
	}
	var usage *yaml.Node
	if u, ok := f["usage"]; ok {
		usage = u.value
	}
	return w.checkPriceCard(d, x.value, usage)
}

// parseScorer reads scorer:, when written.
func (w *Workload) parseScorer(d *decoder, f map[string]field) error {
	x, ok := f["scorer"]
	if !ok {
		return nil
	}
	var err error
	if w.Scorer, err = d.json(x.value, "scorer", 0); err != nil {
		return err
	}
	w.positions["scorer"] = d.pos(x.value)
	return nil
}

// parseCaseList reads cases:. Every contender is declared by now: each
// case's answers are checked against their cells' contracts as the case is
// read, so no case's answers outlive it (checkAnswers says why the first
// error waits).
func (w *Workload) parseCaseList(d *decoder, f map[string]field) error {
	w.positions["cases"] = d.pos(f["cases"].key)
	w.loading = &loadState{}
	w.loading.contenders, w.loading.contendersErr = w.contenders()
	if err := w.parseCases(d, f["cases"].value, "cases"); err != nil {
		return err
	}
	if len(w.Cases) == 0 {
		// Said plainly here, before a gate's range (1 to 0 cases) or the
		// run's empty report says it obliquely.
		return d.fail(f["cases"].key, "cases", "the workload has no cases: add at least one (id, args, expect%s), or a `- file: cases.jsonl` entry that holds some", map[bool]string{true: ", responses", false: ", split"}[w.Kind == KindBench])
	}
	return w.checkCaseBound(d.pos(f["cases"].key))
}

// parseGateKey reads gate:, when written.
func (w *Workload) parseGateKey(d *decoder, f map[string]field) error {
	if x, ok := f["gate"]; ok {
		return w.parseGate(d, x.value)
	}
	return nil
}

func (w *Workload) ref(d *decoder, n *yaml.Node, path string) (Ref, error) {
	s, err := d.nonEmpty(n, path)
	if err != nil {
		return Ref{}, err
	}
	p := s
	if !filepath.IsAbs(p) {
		p = filepath.Join(w.Dir, filepath.FromSlash(s))
	}
	ref := Ref{Path: p, Written: s, Pos: d.pos(n)}
	st, err := os.Stat(p)
	if err != nil {
		return Ref{}, d.fail(n, path, "%s does not exist (paths are relative to the workload file)%s", s, suggest.File(w.Dir, s))
	}
	if st.IsDir() {
		return Ref{}, d.fail(n, path, "%s is a directory, not a file", s)
	}
	return ref, nil
}

func (w *Workload) parseExecutors(d *decoder, n *yaml.Node, path string, allowCases bool) ([]Executor, error) {
	f, order, err := d.mapping(n, path, nil, nil)
	if err != nil {
		return nil, err
	}
	if len(order) == 0 {
		return nil, d.fail(n, path, "needs at least one executor")
	}
	var out []Executor
	for _, name := range order {
		at := join(path, name)
		if !executorPattern.MatchString(name) {
			return nil, d.fail(f[name].key, at, "executor names are 1 to 64 letters, digits, dots, hyphens or underscores")
		}
		spec, err := d.nonEmpty(f[name].value, at)
		if err != nil {
			return nil, err
		}
		ex := Executor{Name: name, Written: spec, Pos: d.pos(f[name].value)}
		switch {
		case spec == CasesExecutor:
			if !allowCases {
				return nil, d.fail(f[name].value, at, "%q is only for executors that serve cases; give the generator a scripted:, replay: or cmd: executor", CasesExecutor)
			}
			ex.Spec = spec
		default:
			if ex.Spec, err = w.checkSpec(d, f[name].value, at, spec); err != nil {
				return nil, err
			}
		}
		out = append(out, ex)
	}
	return out, nil
}

// checkSpec checks an executor spec of a registered scheme where it is
// written (n, at) and resolves its path against the workload's directory:
// a file or directory must exist, and a live spec names a declared backend
// of its api or a model its scheme admits.
func (w *Workload) checkSpec(d *decoder, n *yaml.Node, at, spec string) (string, error) {
	s, ok := effect.ParseSpec(spec, effect.InWorkload)
	if !ok {
		return "", d.fail(n, at, "unknown executor spec %q (want %s, %s)", spec, CasesExecutor, effect.Forms(effect.InWorkload))
	}
	switch s.Scheme.Path {
	case effect.FilePath:
		written := s.Arg
		s.Arg = w.resolve(written)
		if st, err := os.Stat(s.Arg); err != nil || !st.Mode().IsRegular() {
			return "", d.fail(n, at, "%s %s does not exist (paths are relative to the workload file)%s", s.Scheme.Noun, written, suggest.File(w.Dir, written))
		}
	case effect.DirPath:
		written := s.Arg
		s.Arg = w.resolve(written)
		if st, err := os.Stat(s.Arg); err != nil || !st.IsDir() {
			return "", d.fail(n, at, "%s %s does not exist", s.Scheme.Noun, written)
		}
	}
	if live := s.Scheme.Live; live != nil {
		if b, declared := w.Backend(s.Arg); declared && b.API != s.Scheme.Name {
			return "", d.fail(n, at, "backend %q is declared with api %s; name it %s:%s", s.Arg, b.API, b.API, s.Arg)
		} else if !declared {
			if err := live.Default(s.Arg).Validate(); err != nil {
				return "", d.fail(n, at, "%v", err)
			}
		}
	}
	return s.String(), nil
}

func (w *Workload) resolve(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(w.Dir, filepath.FromSlash(p))
}

func (w *Workload) parseSystems(d *decoder, n *yaml.Node) error {
	items, err := d.seq(n, "systems")
	if err != nil {
		return err
	}
	if len(items) == 0 {
		return d.fail(n, "systems", "needs at least one system")
	}
	if len(items) > MaxBenchSystems {
		return d.fail(n, "systems", "holds %d systems, over the %d a bench workload may compare (it runs them in parts of at most %d); split the systems across two or more workloads", len(items), MaxBenchSystems, PartSystems)
	}
	seen := map[string]bool{}
	for i, it := range items {
		at := index("systems", i)
		f, _, err := d.mapping(it, at, []string{"id", "manifest", "executors"}, []string{"id", "manifest", "executors"})
		if err != nil {
			return err
		}
		s := System{Pos: d.pos(it)}
		if s.ID, err = d.str(f["id"].value, at+".id"); err != nil {
			return err
		}
		if !idPattern.MatchString(s.ID) || len(s.ID) > 64 {
			return d.fail(f["id"].value, at+".id", "must be an id: lowercase letters and digits in hyphen-separated segments, at most 64 characters")
		}
		if seen[s.ID] {
			return d.fail(f["id"].value, at+".id", "system %q is declared twice", s.ID)
		}
		seen[s.ID] = true
		if s.Manifest, err = w.ref(d, f["manifest"].value, at+".manifest"); err != nil {
			return err
		}
		if s.Executors, err = w.parseExecutors(d, f["executors"].value, at+".executors", true); err != nil {
			return err
		}
		w.positions[at] = s.Pos
		w.positions[at+".manifest"] = s.Manifest.Pos
		w.positions[at+".executors"] = d.pos(f["executors"].value)
		w.Systems = append(w.Systems, s)
	}
	return nil
}

func (w *Workload) parseAxes(d *decoder, n *yaml.Node) error {
	items, err := d.seq(n, "axes")
	if err != nil {
		return err
	}
	w.positions["axes"] = d.pos(n)
	for i, it := range items {
		at := index("axes", i)
		f, _, err := d.mapping(it, at, []string{"name", "dir", "expr"}, []string{"name", "dir", "expr"})
		if err != nil {
			return err
		}
		a := Axis{Pos: d.pos(it)}
		if a.Name, err = d.str(f["name"].value, at+".name"); err != nil {
			return err
		}
		if a.Dir, err = d.str(f["dir"].value, at+".dir"); err != nil {
			return err
		}
		if a.Dir != "up" && a.Dir != "down" {
			return d.fail(f["dir"].value, at+".dir", `must be "up" (greater is better) or "down" (lower is better)`)
		}
		if a.Program, err = d.json(f["expr"].value, at+".expr", 0); err != nil {
			return err
		}
		w.positions[at] = a.Pos
		w.positions[at+".name"] = d.pos(f["name"].value)
		w.positions[at+".expr"] = d.pos(f["expr"].value)
		w.Axes = append(w.Axes, a)
	}
	return nil
}

func (w *Workload) parseFoundry(d *decoder, f map[string]field) error {
	var err error
	if x, ok := f["candidates"]; ok {
		items, err := d.seq(x.value, "candidates")
		if err != nil {
			return err
		}
		for i, it := range items {
			r, err := w.ref(d, it, index("candidates", i))
			if err != nil {
				return err
			}
			w.positions[index("candidates", i)] = r.Pos
			w.Candidates = append(w.Candidates, r)
		}
	}
	if x, ok := f["generator"]; ok {
		if w.Generator, err = w.parseGenerator(d, x.value); err != nil {
			return err
		}
	}
	if len(w.Candidates) == 0 && w.Generator == nil {
		return errAt(w.pos, "", "a foundry workload needs candidates, a generator, or both")
	}
	if x, ok := f["executors"]; ok {
		if w.Executors, err = w.parseExecutors(d, x.value, "executors", true); err != nil {
			return err
		}
		w.positions["executors"] = d.pos(x.value)
	}
	if x, ok := f["budget"]; ok {
		if w.Budget, err = d.object(x.value, "budget"); err != nil {
			return err
		}
		w.positions["budget"] = d.pos(x.value)
	}
	return nil
}

func (w *Workload) parseGenerator(d *decoder, n *yaml.Node) (*Generator, error) {
	f, _, err := d.mapping(n, "generator", []string{"manifest", "args", "output", "field", "executors"}, []string{"manifest", "output"})
	if err != nil {
		return nil, err
	}
	g := &Generator{Pos: d.pos(n), Args: map[string]any{}}
	if g.Manifest, err = w.ref(d, f["manifest"].value, "generator.manifest"); err != nil {
		return nil, err
	}
	if x, ok := f["args"]; ok {
		if g.Args, err = d.object(x.value, "generator.args"); err != nil {
			return nil, err
		}
	}
	if g.Output, err = d.nonEmpty(f["output"].value, "generator.output"); err != nil {
		return nil, err
	}
	if x, ok := f["field"]; ok {
		if g.Field, err = d.nonEmpty(x.value, "generator.field"); err != nil {
			return nil, err
		}
	}
	if x, ok := f["executors"]; ok {
		if g.Executors, err = w.parseExecutors(d, x.value, "generator.executors", false); err != nil {
			return nil, err
		}
	}
	w.positions["generator"] = g.Pos
	w.positions["generator.manifest"] = g.Manifest.Pos
	w.positions["generator.output"] = d.pos(f["output"].value)
	return g, nil
}

var caseKeys = []string{"id", "split", "args", "expect", "responses", "note"}

// parseCases reads the case list: inline cases and `- file: path` entries
// naming a YAML list of cases or a JSONL file of case objects.
func (w *Workload) parseCases(d *decoder, n *yaml.Node, path string) error {
	items, err := d.seq(n, path)
	if err != nil {
		return err
	}
	for i, it := range items {
		at := index(path, i)
		if m := resolve(it); m != nil && m.Kind == yaml.MappingNode && len(m.Content) == 2 && m.Content[0].Value == "file" {
			f, _, err := d.mapping(m, at, []string{"file"}, []string{"file"})
			if err != nil {
				return err
			}
			r, err := w.ref(d, f["file"].value, at+".file")
			if err != nil {
				return err
			}
			if err := w.includeCases(r); err != nil {
				return err
			}
			w.CaseFiles = append(w.CaseFiles, r.Path)
			continue
		}
		c, err := w.parseCase(d, it, at)
		if err != nil {
			return err
		}
		w.Cases = append(w.Cases, c)
	}
	return nil
}

// jsonlFast builds plain JSON lines' nodes without yaml.v3 (jsonline.go);
// tests and benchmarks turn it off to compare with yaml.v3's nodes.
var JsonlFast = true

// includeCases reads a case file: .jsonl (one JSON object per line; YAML
// parses JSON, so each line goes through the same strict walk with its line
// number) or .yaml/.yml (a list of cases).
func (w *Workload) includeCases(r Ref) error {
	data, err := readBounded(r.Path)
	if err != nil {
		return err
	}
	shown := displayPath(r.Path)
	switch ext := strings.ToLower(filepath.Ext(r.Path)); ext {
	case ".jsonl":
		d := &decoder{file: shown}
		var fast jsonLine
		for i, line := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			d.lineOffset = i
			// A plain JSON line's nodes are built without yaml.v3
			// (jsonline.go); any other line is yaml.v3's to read.
			doc, ok := (*yaml.Node)(nil), false
			if JsonlFast {
				doc, ok = fast.parse(line)
			}
			if !ok {
				doc = &yaml.Node{}
				if err := yaml.Unmarshal(line, doc); err != nil {
					e := yamlSyntaxError(shown, i, err)
					if e.Line == 0 {
						// yaml.v3 names no line for some errors; the
						// document is this one line.
						e.Line, e.Column = i+1, 1
					}
					return e
				}
			}
			if len(doc.Content) == 0 {
				continue
			}
			if err := d.bound(doc); err != nil {
				return err
			}
			c, err := w.parseCase(d, doc.Content[0], "")
			if err != nil {
				return err
			}
			w.Cases = append(w.Cases, c)
		}
		return nil
	case ".yaml", ".yml":
		d := &decoder{file: shown}
		root, err := parseYAML(shown, data)
		if err != nil {
			return err
		}
		items, err := d.seq(root, "")
		if err != nil {
			return err
		}
		for i, it := range items {
			c, err := w.parseCase(d, it, index("", i))
			if err != nil {
				return err
			}
			w.Cases = append(w.Cases, c)
		}
		return nil
	default:
		return errAt(r.Pos, "", "case file %s must be .yaml, .yml or .jsonl", r.Written)
	}
}

var (
	benchCaseKeys       = []string{"id", "args", "expect", "responses", "note"}
	benchCaseRequired   = []string{"id", "args", "expect"}
	foundryCaseRequired = []string{"id", "args", "expect", "split"}
)

func (w *Workload) parseCase(d *decoder, n *yaml.Node, at string) (Case, error) {
	required, allowed := foundryCaseRequired, caseKeys
	if w.Kind == KindBench {
		required, allowed = benchCaseRequired, benchCaseKeys
	}
	f, _, err := d.mapping(n, at, allowed, required)
	if err != nil {
		return Case{}, err
	}
	c := Case{Pos: d.pos(n)}
	if c.ID, err = d.str(f["id"].value, at+".id"); err != nil {
		return Case{}, err
	}
	if !idPattern.MatchString(c.ID) || len(c.ID) > 64 {
		return Case{}, d.fail(f["id"].value, at+".id", "must be an id: lowercase letters and digits in hyphen-separated segments, at most 64 characters")
	}
	// The case outlives its nodes, whose strings may be slices of a whole
	// line (jsonline.go).
	c.ID = strings.Clone(c.ID)
	if x, ok := f["split"]; ok {
		if c.Split, err = d.str(x.value, at+".split"); err != nil {
			return Case{}, err
		}
		if c.Split != "train" && c.Split != "validation" && c.Split != "holdout" {
			return Case{}, d.fail(x.value, at+".split", "must be train, validation or holdout")
		}
		c.Split = strings.Clone(c.Split)
	}
	args, err := d.object(f["args"].value, at+".args")
	if err != nil {
		return Case{}, err
	}
	w.checkCaseArgs(d, f["args"].value, args, at+".args")
	expect, err := d.object(f["expect"].value, at+".expect")
	if err != nil {
		return Case{}, err
	}
	if x, ok := f["note"]; ok {
		if _, err := d.str(x.value, at+".note"); err != nil {
			return Case{}, err
		}
	}
	var responses map[string]map[string][]any
	if x, ok := f["responses"]; ok {
		var answers []Answer
		if responses, answers, c.PerRepeat, err = d.responses(x.value, at+".responses"); err != nil {
			return Case{}, err
		}
		c.data.respAt = toLineCol(d.pos(x.value))
		w.checkCaseAnswers(&c, responses, answers)
	}
	c.data.argsAt = toLineCol(d.pos(f["args"].value))
	c.data.expectAt = toLineCol(d.pos(f["expect"].value))
	if err := c.pack(args, expect, responses); err != nil {
		return Case{}, d.fail(n, at, "%v", err)
	}
	return c, nil
}

// responses reads executor -> cell -> response. A value tagged !queue must
// be a list and serves one element per call; any other value serves one
// call. A value tagged !repeats is a list with one such response per
// repeat (an empty !queue [] where the cell is not called in that repeat). A value (or queue element) tagged !malformed is marked as
// deliberately breaking its cell's contract.
func (d *decoder) responses(n *yaml.Node, path string) (map[string]map[string][]any, []Answer, []RepeatResponse, error) {
	f, order, err := d.mapping(n, path, nil, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	out := map[string]map[string][]any{}
	var answers []Answer
	var perRepeat []RepeatResponse
	for _, ex := range order {
		at := join(path, ex)
		cf, corder, err := d.mapping(f[ex].value, at, nil, nil)
		if err != nil {
			return nil, nil, nil, d.fail(f[ex].value, at, "must map cell ids to responses (executor -> cell -> response)")
		}
		cells := map[string][]any{}
		for _, cell := range corder {
			v := cf[cell].value
			cat := join(at, cell)
			if v.Tag != RepeatsTag {
				vals, as, err := d.response(v, cat, ex, cell)
				if err != nil {
					return nil, nil, nil, err
				}
				cells[cell] = vals
				answers = append(answers, as...)
				continue
			}
			if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
				return nil, nil, nil, d.fail(v, cat, "%s needs a non-empty list: one response per repeat, in repeat order", RepeatsTag)
			}
			rr := RepeatResponse{Executor: ex, Cell: cell, Pos: d.pos(v)}
			for i, e := range v.Content {
				if e.Tag == RepeatsTag {
					return nil, nil, nil, d.fail(e, index(cat, i), "%s lists cannot nest", RepeatsTag)
				}
				if e.Tag == QueueTag && e.Kind == yaml.SequenceNode && len(e.Content) == 0 {
					// The cell is not called in this repeat.
					rr.Values = append(rr.Values, []any{})
					continue
				}
				vals, as, err := d.response(e, index(cat, i), ex, cell)
				if err != nil {
					return nil, nil, nil, err
				}
				rr.Values = append(rr.Values, vals)
				answers = append(answers, as...)
			}
			cells[cell] = rr.Values[0]
			perRepeat = append(perRepeat, rr)
		}
		out[ex] = cells
	}
	return out, answers, perRepeat, nil
}

// response reads one cell's response in one run: a plain value (one
// call) or a !queue (one element per call).
func (d *decoder) response(v *yaml.Node, cat, ex, cell string) ([]any, []Answer, error) {
	elems := []*yaml.Node{v}
	if v.Tag == QueueTag {
		if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
			return nil, nil, d.fail(v, cat, "%s needs a non-empty list: one response per call, in call order", QueueTag)
		}
		elems = v.Content
	}
	var vals []any
	var answers []Answer
	for i, e := range elems {
		eat := cat
		if v.Tag == QueueTag {
			eat = index(cat, i)
		}
		e = resolve(e)
		malformed := e != nil && e.Tag == MalformedTag
		if malformed {
			plain := *e
			plain.Tag = ""
			plain.Tag = plain.ShortTag()
			e = &plain
		}
		x, err := d.json(e, eat, 0)
		if err != nil {
			return nil, nil, err
		}
		vals = append(vals, x)
		answers = append(answers, Answer{Executor: ex, Cell: cell, Index: i, Value: x, Malformed: malformed, Pos: d.pos(e)})
	}
	return vals, answers, nil
}

// checkCaseBound rejects more cases than a workload may run, at the
// `cases:` key, before the engine would reject the compiled list with a
// code about budgets rather than about the workload. A bench runs in parts
// (parts.go), so its bound is MaxBenchCases; a foundry's single promotion
// is over one case list, so its bound is the contract's.
func (w *Workload) checkCaseBound(at Pos) error {
	if w.Kind == KindBench {
		if len(w.Cases) <= MaxBenchCases {
			return nil
		}
		return errAt(at, "cases", "holds %d cases (counting included case files), over the %d a bench workload may run (it runs in parts of at most %d cases, each an %s report); split the cases across two or more workloads, each with its own name",
			len(w.Cases), MaxBenchCases, PartCases, bench.ReportContract)
	}
	if len(w.Cases) <= foundry.MaxCases {
		return nil
	}
	return errAt(at, "cases", "holds %d cases (counting included case files), over the %d a foundry workload may run: %s promotes one candidate on train and validation evidence and runs the holdout once on the winner, over one case list of at most %d, so a foundry cannot be split into parts as a bench is; keep the foundry to %d cases (a representative sample of train, validation and holdout cases) and measure the full case set with a bench workload, which runs up to %d cases in parts",
		len(w.Cases), foundry.MaxCases, foundry.ConfigContract, foundry.MaxCases, foundry.MaxCases, MaxBenchCases)
}

// caseExecutors lists the names of executors that serve from case
// responses.
func (w *Workload) caseExecutors() map[string]bool {
	out := map[string]bool{}
	for _, s := range w.Systems {
		for _, e := range s.Executors {
			if e.FromCases() {
				out[e.Name] = true
			}
		}
	}
	for _, e := range w.Executors {
		if e.FromCases() {
			out[e.Name] = true
		}
	}
	return out
}

// checkReferences: case ids unique, responses only for executors declared
// `cases`, gate rules naming systems and cases that exist.
func (w *Workload) checkReferences() error {
	seen := map[string]Pos{}
	execs := w.caseExecutors()
	for _, c := range w.Cases {
		if p, dup := seen[c.ID]; dup {
			return errAt(c.Pos, "cases", "case id %q is used twice (first at %s)", c.ID, p)
		}
		seen[c.ID] = c.Pos
		var unserved string
		c.eachResponse(func(ex, _ []byte, _ [][]byte) {
			if unserved == "" && !execs[string(ex)] {
				unserved = string(ex)
			}
		})
		if ex := unserved; ex != "" {
			return errAt(c.at(c.data.respAt), "cases["+c.ID+"].responses."+ex,
				"no executor named %q is declared %q, so nothing would serve these responses%s", ex, CasesExecutor, suggest.DidYouMean(ex, slices.Sorted(maps.Keys(execs))))
		}
	}
	for _, ex := range slices.Sorted(maps.Keys(w.Usage)) {
		if !execs[ex] {
			return errAt(w.positions["usage"], "usage."+ex,
				"no executor named %q is declared %q%s; a scripted:<file> table declares its usage under its own %q key", ex, CasesExecutor, suggest.DidYouMean(ex, slices.Sorted(maps.Keys(execs))), effect.UsageKey)
		}
	}
	systems := map[string]bool{}
	for _, s := range w.Systems {
		systems[s.ID] = true
	}
	for _, r := range w.Gate.Rules {
		if r.System != "" && !systems[r.System] {
			return errAt(r.Pos, "gate."+r.Kind, "names system %q, which the workload does not declare%s", r.System, suggest.DidYouMean(r.System, slices.Sorted(maps.Keys(systems))))
		}
		if r.Case != "" {
			if _, ok := seen[r.Case]; !ok {
				return errAt(r.Pos, "gate."+r.Kind, "names case %q, which the workload does not declare%s", r.Case, suggest.DidYouMean(r.Case, slices.Sorted(maps.Keys(seen))))
			}
		}
	}
	return nil
}
