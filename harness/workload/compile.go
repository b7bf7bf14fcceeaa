package workload

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/expr"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/engine/manifest"
)

// ConfigFile is the compiled config's basename in the run directory.
const ConfigFile = "config.json"

// ScriptedFile names the table compiled from case responses for one
// executor. Every contender using that executor loads the same table; each
// session gets its own queues.
func ScriptedFile(executor string) string { return "scripted-" + executor + ".json" }

// Compiled is a workload turned into the canonical engine config.
type Compiled struct {
	Workload *Workload
	// Config is the algal.bench.config.v1 / algal.foundry.config.v1 value
	// written to config.json; its paths are relative to RunDir.
	Config map[string]any
	// Files are the generated files (scripted tables) by basename, as
	// canonical JSON bytes, written beside config.json.
	Files map[string][]byte
	// Identity is the digest of everything that decides the run's results:
	// the config with workload-relative paths, plus the digest of every
	// manifest and scripted table it reads.
	Identity string
	// Slug is <name>-r<revision>-<first 10 hex of Identity>.
	Slug   string
	RunDir string

	// Parts are the parts of a bench workload that runs in parts (nil
	// otherwise); their files come from PartFiles, not Files.
	Parts []Part

	// declared counts the responses each case declares per executor and
	// cell, for the alignment check after the run.
	Declared map[string]map[string]map[string]int
	// partIdentity lists each part's config digest (workload-relative
	// paths), the config member of a run in parts' identity.
	partIdentity []any
}

// Compile turns w into its engine config for a run under outRoot
// (runs/<name>/<slug>). It admits the config with the engine, so every
// engine rejection comes back pointing into the workload file.
func Compile(w *Workload, outRoot string, opts foundry.AdmitOptions) (*Compiled, error) {
	cp := newCompilation(w)
	c := cp.c
	if !w.InParts() {
		if err := cp.scriptedTables(); err != nil {
			return nil, err
		}
		// A run in parts counts a part's cases when it checks the part.
		c.Declared = DeclaredCalls(w, 1)
	}
	for _, execs := range w.executorLists() {
		if err := cp.checkScriptedFiles(execs); err != nil {
			return nil, err
		}
	}
	if err := cp.admitConfigs(opts); err != nil {
		return nil, err
	}
	id, err := canon.Digest(cp.identity())
	if err != nil {
		return nil, err
	}
	c.Identity = id
	c.Slug = fmt.Sprintf("%s-r%d-%s", w.Name, w.Revision, strings.TrimPrefix(id, "sha256:")[:10])
	runDir, err := filepath.Abs(filepath.Join(outRoot, w.Name, c.Slug))
	if err != nil {
		return nil, err
	}
	c.RunDir = runDir
	if !w.InParts() {
		c.Config = w.config(func(p string) string { return rel(runDir, p) }, ScriptedFile)
	}
	return c, nil
}

// compilation is one Compile in progress: the compiled workload and the
// digests of every input file it reads, by workload-relative path.
type compilation struct {
	w      *Workload
	c      *Compiled
	inputs map[string]any
	// manifests are where each manifest path was written, for errors.
	manifests map[string]Pos
}

func newCompilation(w *Workload) *compilation {
	cp := &compilation{w: w, c: &Compiled{Workload: w, Files: map[string][]byte{}}, inputs: map[string]any{}, manifests: map[string]Pos{}}
	for _, s := range w.Systems {
		cp.manifests[s.Manifest.Path] = s.Manifest.Pos
	}
	for _, r := range w.Candidates {
		cp.manifests[r.Path] = r.Pos
	}
	if w.Generator != nil {
		cp.manifests[w.Generator.Manifest.Path] = w.Generator.Manifest.Pos
	}
	return cp
}

// load reads a manifest the config names and records its digest as an
// input; a manifest the engine cannot admit is an error at the path
// that names it.
func (cp *compilation) load(path string) (*manifest.Manifest, error) {
	w := cp.w
	m, err := manifest.ReadFile(path)
	if err != nil {
		p := cp.manifests[path]
		return nil, errAt(p, "", "manifest %s is not an admissible algal.organism.v1 manifest: %s", rel(w.Dir, path), expr.Humanize(err.Error()))
	}
	cp.inputs[rel(w.Dir, path)] = m.Digest
	return m, nil
}

// scriptedTables compiles the scripted tables of case responses, one per
// executor (per executor and repeat when its responses differ per
// repeat); a workload in parts compiles them per part instead.
func (cp *compilation) scriptedTables() error {
	w := cp.w
	order := caseOrder(w)
	for name := range w.caseExecutors() {
		for rep := 1; rep <= w.ScriptedRepeats(name); rep++ {
			b, err := w.scriptedTableAt(order, name, rep)
			if err != nil {
				return err
			}
			file := RepeatScriptedFile(name, rep)
			cp.c.Files[file] = append(b, '\n')
			cp.inputs[file] = canon.DigestBytes(b)
		}
	}
	return nil
}

// executorLists are every executor list of w: each system's, the
// foundry's and its generator's.
func (w *Workload) executorLists() [][]Executor {
	var out [][]Executor
	for _, s := range w.Systems {
		out = append(out, s.Executors)
	}
	out = append(out, w.Executors)
	if w.Generator != nil {
		out = append(out, w.Generator.Executors)
	}
	return out
}

// checkScriptedFiles checks that file-based scripted tables are JSON
// objects; their content is part of the identity.
func (cp *compilation) checkScriptedFiles(execs []Executor) error {
	for _, e := range execs {
		p, ok := strings.CutPrefix(e.Spec, "scripted:")
		if !ok {
			continue
		}
		v, err := canon.ReadFile(p, effect.MaxScriptedBytes)
		if err != nil {
			return errAt(e.Pos, "executors."+e.Name, "scripted responses %s: %v", e.Written, err)
		}
		if _, isObj := v.(map[string]any); !isObj {
			return errAt(e.Pos, "executors."+e.Name, "scripted responses %s must be a JSON object keyed by cell id or request digest", e.Written)
		}
		d, _ := canon.Digest(v)
		cp.inputs[rel(cp.w.Dir, p)] = d
	}
	return nil
}

// admitConfigs admits the config (or every part's) with the engine. It
// loads every manifest (filling inputs) and catches engine-level
// problems with absolute paths first.
func (cp *compilation) admitConfigs(opts foundry.AdmitOptions) error {
	w := cp.w
	if w.InParts() {
		return cp.c.compileParts(cp.inputs, cp.load)
	}
	abs := func(p string) string { return p }
	absCfg := w.config(abs, func(name string) string { return filepath.Join(w.Dir, ScriptedFile(name)) })
	return admit(w, absCfg, cp.load, opts)
}

// identity is the value whose digest is the run's identity: what decides
// its results.
func (cp *compilation) identity() map[string]any {
	w := cp.w
	var written any
	if w.InParts() {
		// The parts' configs in the workload's frame, each by digest, so
		// the identity never holds the whole case list as one value.
		written = cp.c.partIdentity
	} else {
		written = w.config(func(p string) string { return rel(w.Dir, p) }, ScriptedFile)
	}
	identity := map[string]any{
		"kind": string(w.Kind), "name": w.Name, "revision": float64(w.Revision),
		"config": written, "inputs": cp.inputs,
	}
	if w.Repeats > 1 {
		// Repeats decide the samples; one repeat keeps the identity every
		// run directory had before repeats existed.
		identity["repeats"] = float64(w.Repeats)
	}
	if len(w.Backends) > 0 {
		// What decides a live backend's answers decides the results too
		// (the configuration digest's fields, never a key).
		bs := map[string]any{}
		for _, b := range w.Backends {
			bs[b.Name] = b.Config.Value()
		}
		identity["backends"] = bs
	}
	return identity
}

// scriptedTable compiles the responses cases declare for one executor into
// its table's canonical bytes (cell queues in session order, plus the
// declared usage), within the scripted table bound.
func (w *Workload) scriptedTable(order []Case, name string) ([]byte, error) {
	return w.scriptedTableAt(order, name, 1)
}

// scriptedTableAt is scriptedTable with the responses of repeat rep.
//
// The table is the canonical encoding of {cell: [values in case order],
// "$usage": usage}, and each case holds its values as canonical JSON
// already (workload_case.go), so the table is assembled from those bytes
// rather than decoded and encoded again: a run in parts compiles each
// part's tables twice and ci verify three times. Canonical JSON is
// compositional (an array's encoding is its elements' encodings between
// brackets, an object's its sorted members'), so the bytes are the ones
// encoding the decoded table gives; TestScriptedTablesAssembleAsEncoded
// holds them equal. What assembly cannot show the same way (values that
// differ per repeat, a value too deep to nest in the table, a cell named
// like the usage key) is decoded and encoded as before.
func (w *Workload) scriptedTableAt(order []Case, name string, rep int) ([]byte, error) {
	if b, ok := w.assembleScriptedTable(order, name, rep); ok {
		return w.checkScriptedTable(name, b, nil)
	}
	return w.encodeScriptedTable(order, name, rep)
}

// encodeScriptedTable is scriptedTableAt by decoding every case's
// responses and encoding the table.
func (w *Workload) encodeScriptedTable(order []Case, name string, rep int) ([]byte, error) {
	table := map[string]any{}
	if u, ok := w.Usage[name]; ok {
		table[effect.UsageKey] = u
	}
	for _, cs := range order {
		for cell, vals := range cs.responsesAt(rep)[name] {
			q, _ := table[cell].([]any)
			table[cell] = append(q, vals...)
		}
	}
	b, err := canon.Encode(table)
	if err != nil {
		return nil, errAt(w.pos, "cases", "responses for executor %q: %v", name, err)
	}
	return w.checkScriptedTable(name, b, table)
}

// checkScriptedTable bounds a compiled table's bytes and checks its
// declared usage as the engine will. table is the decoded table, or nil
// when it was assembled: the engine's check of a table that encodes within
// the bound only reads its usage key, so a table of the usage alone fails
// it exactly as the whole table would.
func (w *Workload) checkScriptedTable(name string, b []byte, table map[string]any) ([]byte, error) {
	if len(b) > effect.MaxScriptedBytes {
		return nil, errAt(w.pos, "cases", "the responses for executor %q compile to %d bytes, over the %d-byte scripted table bound", name, len(b), effect.MaxScriptedBytes)
	}
	if u, ok := w.Usage[name]; ok {
		if table == nil {
			table = map[string]any{effect.UsageKey: u}
		}
		if _, err := effect.NewScripted(name, table); err != nil {
			return nil, errAt(w.positions["usage"], "usage."+name, "%v", err)
		}
	}
	return b, nil
}

// assembleScriptedTable is the table's canonical bytes put together from
// the cases' packed values, or false when it must be encoded instead.
func (w *Workload) assembleScriptedTable(order []Case, name string, rep int) ([]byte, bool) {
	if rep > 1 {
		for i := range order {
			if len(order[i].PerRepeat) > 0 {
				return nil, false
			}
		}
	}
	cells := map[string][][]byte{}
	var keys []string
	size, deep := 0, false
	for i := range order {
		order[i].eachExecutorResponse(name, func(cell []byte, vals [][]byte) {
			q, seen := cells[string(cell)]
			if !seen {
				keys = append(keys, string(cell))
			}
			for _, v := range vals {
				// The table nests each value two levels down.
				deep = deep || tooDeepIn(v, canon.MaxDepth-2)
				size += len(v) + 1
			}
			cells[string(cell)] = append(q, vals...)
		})
	}
	u, hasUsage := w.Usage[name]
	if deep || cells[effect.UsageKey] != nil {
		return nil, false
	}
	if hasUsage {
		keys = append(keys, effect.UsageKey)
	}
	slices.SortFunc(keys, canon.CompareKeys)
	b := make([]byte, 0, size+16*len(keys)+2)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = canon.AppendEncode(b, k); err != nil {
			return nil, false
		}
		b = append(b, ':')
		if k == effect.UsageKey && hasUsage {
			if b, err = canon.AppendEncode(b, u); err != nil {
				return nil, false
			}
			continue
		}
		b = append(b, '[')
		for j, v := range cells[k] {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, v...)
		}
		b = append(b, ']')
	}
	return append(b, '}'), true
}

// tooDeepIn reports whether canonical JSON b nests more than max levels
// below its root.
func tooDeepIn(b []byte, max int) bool {
	depth, inString := 0, false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			if depth++; depth > max {
				return true
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return false
}

// caseOrder is the order the engine runs cases on one session: the case
// list for a bench; selection cases then holdout cases for a foundry, as
// the promoted candidate's session runs its holdout after selection.
func caseOrder(w *Workload) []Case {
	if w.Kind == KindBench {
		return w.Cases
	}
	var sel, hold []Case
	for _, c := range w.Cases {
		if c.Split == "holdout" {
			hold = append(hold, c)
		} else {
			sel = append(sel, c)
		}
	}
	return append(sel, hold...)
}

// rel writes target relative to base with forward slashes, or absolute
// when no relative path exists.
func rel(base, target string) string {
	absBase, err1 := filepath.Abs(base)
	absTarget, err2 := filepath.Abs(target)
	if err1 == nil && err2 == nil {
		if r, err := filepath.Rel(absBase, absTarget); err == nil {
			return filepath.ToSlash(r)
		}
	}
	return filepath.ToSlash(target)
}

// config builds the engine config value. path maps a resolved file path
// into the config's frame; table names the compiled table of a `cases`
// executor in that frame.
func (w *Workload) config(path func(string) string, table func(string) string) map[string]any {
	cases := make([]any, 0, len(w.Cases))
	for _, c := range w.Cases {
		cv := map[string]any{"id": c.ID, "args": c.Args(), "expect": c.Expect()}
		if w.Kind == KindFoundry {
			cv["split"] = c.Split
		}
		cases = append(cases, cv)
	}
	cfg := w.configWithout(path, table)
	cfg["cases"] = cases
	return cfg
}

// configBytes is the canonical encoding of w.config(path, table),
// assembled with each case's args and expectation as the canonical bytes
// the case holds them in (as scriptedTableAt assembles tables: a run in
// parts encodes each part's config once, and ci verify twice, with no
// need to decode 20,000 cases for it). A config holding a case whose data
// was released, or whose args or expectation nest too deeply to encode in
// the config, is encoded from its decoded value, which says how it fails.
func (w *Workload) configBytes(path, table func(string) string) ([]byte, error) {
	slow := func() ([]byte, error) { return canon.Encode(w.config(path, table)) }
	size := 0
	for i := range w.Cases {
		args, expect, ok := w.Cases[i].packedArgs()
		// The config nests args and expect three levels down.
		if !ok || tooDeepIn(args, canon.MaxDepth-3) || tooDeepIn(expect, canon.MaxDepth-3) {
			return slow()
		}
		size += len(args) + len(expect) + len(w.Cases[i].ID) + 32
	}
	cfg := w.configWithout(path, table)
	keys := append(slices.Collect(maps.Keys(cfg)), "cases")
	slices.SortFunc(keys, canon.CompareKeys)
	b := make([]byte, 0, size+4096)
	b = append(b, '{')
	var err error
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = canon.AppendEncode(b, k); err != nil {
			return slow()
		}
		b = append(b, ':')
		if k != "cases" {
			// Encoded on its own, the member is one level shallower
			// than in the config.
			at := len(b)
			if b, err = canon.AppendEncode(b, cfg[k]); err != nil || tooDeepIn(b[at:], canon.MaxDepth-1) {
				return slow()
			}
			continue
		}
		b = append(b, '[')
		for j := range w.Cases {
			c := &w.Cases[j]
			args, expect, _ := c.packedArgs()
			if j > 0 {
				b = append(b, ',')
			}
			// Members in canonical order: args, expect, id, split.
			b = append(b, `{"args":`...)
			b = append(b, args...)
			b = append(b, `,"expect":`...)
			b = append(b, expect...)
			b = append(b, `,"id":`...)
			if b, err = canon.AppendEncode(b, c.ID); err != nil {
				return slow()
			}
			if w.Kind == KindFoundry {
				b = append(b, `,"split":`...)
				if b, err = canon.AppendEncode(b, c.Split); err != nil {
					return slow()
				}
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}'), nil
}

// configWithout is w.config without its cases.
func (w *Workload) configWithout(path func(string) string, table func(string) string) map[string]any {
	execs := func(list []Executor) map[string]any {
		out := map[string]any{}
		for _, e := range list {
			switch {
			case e.FromCases():
				out[e.Name] = "scripted:" + filepath.ToSlash(table(e.Name))
			case strings.HasPrefix(e.Spec, "scripted:"):
				out[e.Name] = "scripted:" + path(e.Spec[len("scripted:"):])
			case strings.HasPrefix(e.Spec, "replay:"):
				out[e.Name] = "replay:" + path(e.Spec[len("replay:"):])
			default:
				out[e.Name] = e.Spec
			}
		}
		return out
	}
	cfg := map[string]any{}
	if w.Scorer != nil {
		cfg["scorer"] = map[string]any{"contract": "algal.expr.v1", "program": w.Scorer}
	}
	if w.Kind == KindBench {
		cfg["contract"] = bench.ConfigContract
		systems := make([]any, 0, len(w.Systems))
		for _, s := range w.Systems {
			systems = append(systems, map[string]any{"id": s.ID, "manifest": path(s.Manifest.Path), "executors": execs(s.Executors)})
		}
		cfg["systems"] = systems
		if w.Prices != nil {
			cfg["prices"] = w.Prices
		}
		if w.Axes != nil {
			axes := make([]any, 0, len(w.Axes))
			for _, a := range w.Axes {
				axes = append(axes, map[string]any{"name": a.Name, "dir": a.Dir, "expr": map[string]any{"contract": "algal.expr.v1", "program": a.Program}})
			}
			cfg["axes"] = axes
		}
		return cfg
	}
	cfg["contract"] = foundry.ConfigContract
	if len(w.Candidates) > 0 {
		cands := make([]any, 0, len(w.Candidates))
		for _, r := range w.Candidates {
			cands = append(cands, path(r.Path))
		}
		cfg["candidates"] = cands
	}
	if g := w.Generator; g != nil {
		gv := map[string]any{"manifest": path(g.Manifest.Path), "args": g.Args, "output": g.Output}
		if g.Field != "" {
			gv["field"] = g.Field
		}
		if len(g.Executors) > 0 {
			gv["executors"] = execs(g.Executors)
		}
		cfg["generator"] = gv
	}
	if len(w.Executors) > 0 {
		cfg["executors"] = execs(w.Executors)
	}
	if w.Budget != nil {
		cfg["budget"] = w.Budget
	}
	return cfg
}

// admit runs the engine's own admission and maps its rejection back to the
// workload position of the field it names.
func admit(w *Workload, cfg map[string]any, loader func(string) (*manifest.Manifest, error), opts foundry.AdmitOptions) error {
	var err error
	if w.Kind == KindBench {
		_, err = bench.ParseConfig(cfg, w.Dir, loader)
	} else {
		_, err = foundry.ParseConfig(cfg, w.Dir, loader, opts)
	}
	if err == nil {
		return nil
	}
	// A workload rejection is already positioned; a config field rejection
	// (it names its field in Path) is positioned here; anything else (a
	// manifest that does not admit) is reported at the workload.
	if f, ok := fault.As(err); ok {
		if f.Code == CodeWorkload {
			return f
		}
		if f.Path != "" {
			return w.engineError(f)
		}
	}
	return errAt(w.pos, "", "%v", err)
}

// engineError positions an engine rejection at the longest prefix of its
// field that the workload knows a position for.
func (w *Workload) engineError(ee *fault.Error) *fault.Error {
	field := ee.Path
	for i, c := range w.Cases {
		w.positions[index("cases", i)] = c.Pos
	}
	probe := field
	for probe != "" {
		if p, ok := w.positions[probe]; ok {
			return errAt(p, field, "%s (%s)", ee.Message, ee.Code)
		}
		if p, ok := w.casePosition(probe); ok {
			return errAt(p, field, "%s (%s)", ee.Message, ee.Code)
		}
		cut := max(strings.LastIndex(probe, "."), strings.LastIndex(probe, "["))
		if cut <= 0 {
			break
		}
		probe = probe[:cut]
	}
	return errAt(w.pos, field, "%s (%s)", ee.Message, ee.Code)
}
