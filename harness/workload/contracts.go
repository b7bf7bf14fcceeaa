package workload

import (
	"fmt"
	"slices"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/expr"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/internal/suggest"
)

// Two mistakes pass a run silently unless the workload is read against the
// organisms it names, so Load reads them:
//
//   - a scripted answer that can never satisfy its cell's output contract
//     (a label typo, JSON failing the schema) only lowers a score. Every
//     answer is checked against the contract of the cell it is written
//     for; an answer meant to be malformed carries the !malformed tag.
//   - an executor name that matches no cell's route (renamed cheap to mini)
//     sends the cell to whatever executor routing falls back to. Each
//     contender's cells are routed statically, as effect.Router would, and
//     a cell whose route names no declared executor, or an executor no cell
//     reaches, is an error.
//
// Candidates a generator proposes are not known at load; they are checked
// by the run itself.

// MalformedTag marks a scripted answer that deliberately breaks its cell's
// output contract (to test a repair or onMiss path): `route: !malformed
// postive`. Load rejects a malformed answer without it, and the tag on an
// answer that satisfies the contract.
const MalformedTag = "!malformed"

// Answer is one scripted response as written in a case, with where it was
// written.
type Answer struct {
	Executor, Cell string
	Index          int // position in a !queue, 0 for a plain value
	Value          any
	Malformed      bool
	Pos            Pos
}

// contender is one manifest with the executors that serve it.
type contender struct {
	label     string // `system "cheap"`, `candidate a.algal.json`, `the generator`
	path      string // key path of its executors, for errors
	pos       Pos
	file      string // the manifest as written
	manifest  *manifest.Manifest
	executors []Executor
	// shared: the executors also serve other contenders (a foundry's
	// population), so one that reaches no cell here is not a mistake.
	shared bool
}

// readManifest loads one manifest the workload names, and rejects the
// graph mistakes its run would be rejected for (see staticGraphCodes).
func (w *Workload) readManifest(r Ref, path string) (*manifest.Manifest, error) {
	m, err := manifest.ReadFile(r.Path)
	if err == nil {
		if gerr := GraphMistake(m); gerr != nil {
			err = manifest.LocateFile(r.Path, gerr)
		}
	}
	if err != nil {
		return nil, errAt(r.Pos, path, "manifest %s is not an admissible algal.organism.v1 manifest: %s", r.Written, expr.Humanize(fault.Advised(err)))
	}
	return m, nil
}

// graphMistake compiles m against the builtin registries and returns the
// rejection when it is one of staticGraphCodes.
func GraphMistake(m *manifest.Manifest) error {
	_, err := manifest.Compile(m, manifest.Options{})
	if e, ok := fault.As(err); ok && staticGraphCodes[e.Code] {
		return err
	}
	return nil
}

// staticGraphCodes are the compile rejections that depend on the manifest
// alone: an edge or interface naming a missing cell or port, incompatible
// types, a guard that cannot fit, a cycle. Every run compiles the manifest
// before its first cell and fails with the same code (upstream raises them
// at compile time too), so a workload is told at load instead of by every
// receipt. What the host decides is left to the run: host fns and tools
// (FN_UNKNOWN, TOOL_UNKNOWN) and embedded children, which resolve from the
// store (STORE_MISS, DIGEST_MISMATCH, and the bounds of the expansion), so
// a manifest embedding a child is left to its run.
var staticGraphCodes = map[string]bool{
	fault.ManifestInvalid:   true,
	fault.GraphCycle:        true,
	fault.TypeMismatch:      true,
	fault.GuardInvalid:      true,
	fault.InterfaceMismatch: true,
}

// contenders lists every manifest known at load with its executors.
func (w *Workload) contenders() ([]contender, error) {
	var out []contender
	for i, s := range w.Systems {
		at := index("systems", i)
		m, err := w.readManifest(s.Manifest, at+".manifest")
		if err != nil {
			return nil, err
		}
		out = append(out, contender{label: fmt.Sprintf("system %q", s.ID), path: at + ".executors", pos: w.positions[at+".executors"],
			file: s.Manifest.Written, manifest: m, executors: s.Executors})
	}
	for i, r := range w.Candidates {
		m, err := w.readManifest(r, index("candidates", i))
		if err != nil {
			return nil, err
		}
		out = append(out, contender{label: "candidate " + r.Written, path: "executors", pos: w.positions["executors"],
			file: r.Written, manifest: m, executors: w.Executors, shared: true})
	}
	if g := w.Generator; g != nil {
		m, err := w.readManifest(g.Manifest, "generator.manifest")
		if err != nil {
			return nil, err
		}
		out = append(out, contender{label: "the generator", path: "generator.executors", pos: g.Pos,
			file: g.Manifest.Written, manifest: m, executors: g.Executors})
	}
	return out, nil
}

// checkManifests reads the workload's manifests and checks routes and
// scripted answers against them.
func (w *Workload) checkManifests() error {
	l := w.loading
	if l.contendersErr != nil {
		return l.contendersErr
	}
	if err := w.checkRoutes(l.contenders); err != nil {
		return err
	}
	if err := w.checkPromoted(l.contenders); err != nil {
		return err
	}
	if l.argsErr != nil {
		return l.argsErr
	}
	return l.answersErr
}

// loadState is what Parse carries while it reads the cases: the
// contenders (read before the cases, as everything they depend on is
// written before cases:) and the first answer found to break its cell's
// contract.
type loadState struct {
	contenders    []contender
	contendersErr error
	argsErr       error
	answersErr    error
}

// checkPromoted rejects a promoted rule naming no candidate's key, which
// could never hold, unless a generator may propose the organism.
func (w *Workload) checkPromoted(cs []contender) error {
	if w.Generator != nil {
		return nil
	}
	var keys []string
	for _, c := range cs {
		if c.shared {
			keys = append(keys, c.manifest.Key)
		}
	}
	for _, r := range w.Gate.Rules {
		if r.Kind == RulePromoted && !slices.Contains(keys, r.Text) {
			return errAt(r.Pos, "gate."+RulePromoted, "names %q, which is no candidate's key%s (the candidates are %s)",
				r.Text, suggest.DidYouMean(r.Text, keys), quoteList(keys))
		}
	}
	return nil
}

// effectRoute returns the route values (provider, preset) effect.Router
// matches executor names against, for a cell that issues effects.
func effectRoute(c *manifest.Cell) (names []string, ok bool) {
	if !c.Kind.IsEffect() {
		return nil, false
	}
	var r *manifest.Route
	switch {
	case c.Agent != nil:
		r = c.Agent.Route
	case c.Decide != nil:
		r = c.Decide.Route
	case c.Recall != nil:
		r = c.Recall.Route
	}
	if r != nil {
		for _, v := range []string{r.Provider, r.Preset} {
			if v != "" {
				names = append(names, v)
			}
		}
	}
	return names, true
}

func routeMatches(executor string, names []string) bool {
	for _, n := range names {
		if executor == n || executor == "provider:"+n || executor == "preset:"+n {
			return true
		}
	}
	return false
}

// checkRoutes routes every effect cell statically: a cell without a route
// goes to the first executor by name (the order the workbench admits
// them), a routed cell to the executor its route names. A route naming no
// executor would fall back to another one (or be unbound), and an executor
// no cell reaches answers nothing; both are reported for the contender.
func (w *Workload) checkRoutes(cs []contender) error {
	reached := map[string]bool{} // shared executors reached by some candidate
	shared := false
	var sharedAt Pos
	for _, c := range cs {
		names, replay := executorNames(c.executors)
		// A recording answers the requests it holds, whatever their route.
		if len(names) == 0 || replay {
			continue
		}
		served, unrouted := routeCells(c, names)
		var idle []string
		for _, n := range names {
			if len(served[n]) > 0 {
				reached[n] = true
				continue
			}
			// A manifest without effect cells (a constant baseline) has
			// nothing to misroute; its system still names an executor.
			if !c.shared && hasEffects(c.manifest) {
				idle = append(idle, n)
			}
		}
		if c.shared {
			shared, sharedAt = true, c.pos
		}
		if len(unrouted) > 0 || len(idle) > 0 {
			return errAt(c.pos, c.path, "%s. An executor serves the cells whose route (provider or preset) names it, and cells without a route go to the first executor by name", misroutedMessage(c, unrouted, idle))
		}
	}
	// A foundry's executors serve the whole population: one no file
	// candidate reaches is a mistake unless a generator proposes more.
	if !shared || w.Generator != nil {
		return nil
	}
	var idle []string
	for _, e := range w.Executors {
		if !reached[e.Name] {
			idle = append(idle, e.Name)
		}
	}
	if len(idle) > 0 {
		return errAt(sharedAt, "executors", "executor(s) %s serve no cell of any candidate; an executor serves the cells whose route (provider or preset) names it, and cells without a route go to the first executor by name", quoteList(idle))
	}
	return nil
}

// executorNames are the names of execs, sorted (the order the workbench
// admits them), and whether any of them replays a recording.
func executorNames(execs []Executor) (names []string, replay bool) {
	names = make([]string, 0, len(execs))
	for _, e := range execs {
		names = append(names, e.Name)
		replay = replay || strings.HasPrefix(e.Spec, "replay:")
	}
	slices.Sort(names)
	return names, replay
}

// routeCells routes each effect cell of c to one of its executors
// (names, sorted): the cells each serves, and a sentence for each cell
// whose route names none of them.
func routeCells(c contender, names []string) (served map[string][]string, unrouted []string) {
	served = map[string][]string{}
	for _, cell := range c.manifest.Cells {
		route, ok := effectRoute(cell)
		if !ok {
			continue
		}
		if len(route) == 0 {
			served[names[0]] = append(served[names[0]], cell.ID)
			continue
		}
		i := slices.IndexFunc(names, func(n string) bool { return routeMatches(n, route) })
		if i < 0 {
			unrouted = append(unrouted, fmt.Sprintf("cell %q routes to %q, but no executor of %s has that name%s",
				cell.ID, strings.Join(route, "/"), c.label, suggest.DidYouMean(route[len(route)-1], names)))
			continue
		}
		served[names[i]] = append(served[names[i]], cell.ID)
	}
	return served, unrouted
}

// misroutedMessage says which cells of c route nowhere and which of its
// executors serve no cell.
func misroutedMessage(c contender, unrouted, idle []string) string {
	msg := strings.Join(unrouted, "; ")
	if len(idle) > 0 {
		if msg != "" {
			msg += "; "
		}
		msg += fmt.Sprintf("executor(s) %s serve no cell of %s (%s)", quoteList(idle), c.label, routeSummary(c.manifest))
	}
	return msg
}

func hasEffects(m *manifest.Manifest) bool {
	for _, cell := range m.Cells {
		if cell.Kind.IsEffect() {
			return true
		}
	}
	return false
}

// routeSummary says where a manifest's effect cells route, for messages.
func routeSummary(m *manifest.Manifest) string {
	var parts []string
	for _, cell := range m.Cells {
		route, ok := effectRoute(cell)
		if !ok {
			continue
		}
		if len(route) == 0 {
			parts = append(parts, fmt.Sprintf("%s has no route", cell.ID))
		} else {
			parts = append(parts, fmt.Sprintf("%s routes to %s", cell.ID, strings.Join(route, "/")))
		}
	}
	if len(parts) == 0 {
		return "it has no cell that calls an executor"
	}
	return strings.Join(parts, ", ")
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// checkCaseAnswers checks a case's scripted answers, as it is read,
// against the output contract of the cell each is written for, in every
// known manifest whose contender the executor serves. The first error
// found is kept, not returned: a workload reports its case and reference
// mistakes before its manifests' (checkManifests), and answers are
// checked last among those, so what the error would have been is known
// without holding every case's answers until then.
func (w *Workload) checkCaseAnswers(c *Case, responses map[string]map[string][]any, answers []Answer) {
	l := w.loading
	if l == nil || l.contendersErr != nil || l.answersErr != nil {
		return
	}
	l.answersErr = w.answersProblem(l.contenders, c, responses, answers)
}

func (w *Workload) answersProblem(cs []contender, c *Case, responses map[string]map[string][]any, answers []Answer) error {
	for _, a := range answers {
		// The field and the cells are for a message; most answers need
		// neither (20,000 cases are read at a time).
		at := func() string {
			at := fmt.Sprintf("cases[%s].responses.%s.%s", c.ID, a.Executor, a.Cell)
			if a.Index > 0 || len(responses[a.Executor][a.Cell]) > 1 {
				at = index(at, a.Index)
			}
			return at
		}
		satisfied, broken, seen, served := 0, false, false, false
		for _, ct := range cs {
			if !servedBy(ct, a.Executor) {
				continue
			}
			served = true
			cell, ok := ct.manifest.Cell(a.Cell)
			if !ok {
				continue
			}
			seen = true
			if cell.Agent == nil {
				continue
			}
			why := answerProblem(cell, a.Value)
			switch {
			case why == "":
				satisfied++
			case !a.Malformed:
				return errAt(a.Pos, at(), "%s, so the answer can never satisfy cell %q of %s; fix the answer, or tag it %s if it is meant to break the contract",
					why, a.Cell, ct.file, MalformedTag)
			default:
				broken = true
			}
		}
		if a.Malformed && !broken && satisfied > 0 {
			return errAt(a.Pos, at(), "is tagged %s but satisfies the output contract of cell %q; remove the tag", MalformedTag, a.Cell)
		}
		if seen || w.Generator != nil || !served {
			continue
		}
		var cells []string
		for _, ct := range cs {
			if !servedBy(ct, a.Executor) {
				continue
			}
			for _, cell := range ct.manifest.Cells {
				if _, ok := effectRoute(cell); ok {
					cells = append(cells, cell.ID)
				}
			}
		}
		if len(cells) > 0 {
			slices.Sort(cells)
			cells = slices.Compact(cells)
			return errAt(a.Pos, at(), "no manifest executor %q serves has a cell %q%s (its cells that call executors: %s)",
				a.Executor, a.Cell, suggest.DidYouMean(a.Cell, cells), strings.Join(cells, ", "))
		}
	}
	return nil
}

func servedBy(c contender, executor string) bool {
	for _, e := range c.executors {
		if e.Name == executor && e.FromCases() {
			return true
		}
	}
	return false
}

// answerProblem says why v can never bind to the cell's output contract,
// or "" when it can (as the VM binds it: a label of a choice, a string for
// text, a value the schema admits for json, or a tool call the cell
// allows).
func answerProblem(c *manifest.Cell, v any) string {
	a := c.Agent
	if m, ok := v.(map[string]any); ok && len(a.Tools) > 0 {
		if name, _ := m["tool"].(string); slices.Contains(a.Tools, name) {
			if _, isObj := m["inputs"].(map[string]any); isObj {
				return ""
			}
		}
	}
	o := a.Output
	switch o.Kind {
	case manifest.TypeChoice:
		s, ok := v.(string)
		if !ok {
			return fmt.Sprintf("the answer is %s, not one of the labels %s", evidence.Describe(v), quoteList(o.Labels))
		}
		if !slices.Contains(o.Labels, s) {
			return fmt.Sprintf("%q is not one of the labels %s%s", s, quoteList(o.Labels), suggest.DidYouMean(s, o.Labels))
		}
	case manifest.TypeText:
		if _, ok := v.(string); !ok {
			return fmt.Sprintf("the cell answers text, and the answer is %s", evidence.Describe(v))
		}
	case manifest.TypeJSON:
		if o.Schema != nil {
			if msg := manifest.ValidateValue(o.Schema, v, o.SchemaVersion); msg != "" {
				b, _ := canon.Encode(v)
				return fmt.Sprintf("the answer %s fails the cell's schema (%s)", clip(string(b), 80), msg)
			}
		}
	}
	return ""
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
