package runrecord

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// maxAssemblyBytes bounds an _assembly.json read from disk.
const maxAssemblyBytes = 4 << 20

// Validate checks that the roster can drive a run: a pipeline and harness
// name, at least one phase, unique positive phase numbers, a skill for every
// non-branch phase, a pattern and a non-empty chain for every branch, and
// plain basenames for declared outputs.
func (a Assembly) Validate() error {
	if a.Pipeline == "" {
		return badAssembly("pipeline is empty")
	}
	if a.HarnessName == "" {
		return badAssembly("harness_name is empty")
	}
	if a.SourceRevision < 0 {
		return badAssembly("source_revision %d is negative", a.SourceRevision)
	}
	if len(a.Phases) == 0 {
		return badAssembly("phases is empty")
	}
	seen := map[int]bool{}
	for i, p := range a.Phases {
		where := fmt.Sprintf("phases[%d]", i)
		if p.N <= 0 {
			return badAssembly("%s.phase %d is not a positive number", where, p.N)
		}
		if seen[p.N] {
			return badAssembly("%s.phase %d appears twice", where, p.N)
		}
		seen[p.N] = true
		if err := p.validate(where); err != nil {
			return err
		}
	}
	return nil
}

// badAssembly is a problem with _assembly.json.
func badAssembly(format string, x ...any) error {
	return errf(CodeAssembly, AssemblyFile, format, x...)
}

// validate checks one phase of the roster (at where): its kind, what its
// kind needs (a branch's pattern and chain, a step's or loop's skill) and
// its outputs.
func (p AssemblyPhase) validate(where string) error {
	if p.Kind == "" {
		return badAssembly("%s.kind is empty", where)
	}
	var err error
	if p.Kind == KindBranch {
		err = p.validateBranch(where)
	} else {
		err = p.validateSkill(where)
	}
	if err != nil {
		return err
	}
	for j, o := range p.Outputs {
		if o.ID == "" {
			return badAssembly("%s.outputs[%d].id is empty", where, j)
		}
		if !plainBasename(o.File) {
			return badAssembly("%s.outputs[%d].file %q is not a plain file name", where, j, o.File)
		}
	}
	return nil
}

// validateBranch checks a branch: a pattern, distinct non-empty chain
// members, no skill.
func (p AssemblyPhase) validateBranch(where string) error {
	if p.Pattern == "" {
		return badAssembly("%s: a branch needs a pattern", where)
	}
	if len(p.Chain) == 0 {
		return badAssembly("%s: a branch needs chain members", where)
	}
	members := map[string]bool{}
	for j, m := range p.Chain {
		if m == "" || members[m] {
			return badAssembly("%s.chain[%d] is empty or repeated", where, j)
		}
		members[m] = true
	}
	if p.Skill != "" {
		return badAssembly("%s: a branch names a pattern, not a skill", where)
	}
	return nil
}

// validateSkill checks a step or loop: a skill, and no pattern or chain.
func (p AssemblyPhase) validateSkill(where string) error {
	if p.Skill == "" {
		return badAssembly("%s.skill is empty", where)
	}
	if p.Pattern != "" || len(p.Chain) != 0 {
		return badAssembly("%s: pattern and chain belong to branch phases", where)
	}
	return nil
}

func plainBasename(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\\\x00")
}

// phase returns the roster entry numbered n.
func (a Assembly) phase(n int) (AssemblyPhase, bool) {
	for _, p := range a.Phases {
		if p.N == n {
			return p, true
		}
	}
	return AssemblyPhase{}, false
}

// EncodeAssembly returns the exact bytes the harness writes as
// _assembly.json: canonical JSON plus one newline. Encoding the same
// assembly always gives the same bytes, so the same roster always has the
// same assembly_sha256.
func EncodeAssembly(a Assembly) ([]byte, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	phases := make([]any, 0, len(a.Phases))
	for _, p := range a.Phases {
		m := map[string]any{"phase": float64(p.N), "kind": p.Kind}
		if p.Skill != "" {
			m["skill"] = p.Skill
		}
		if p.Pattern != "" {
			m["pattern"] = p.Pattern
		}
		if len(p.Chain) > 0 {
			chain := make([]any, len(p.Chain))
			for i, c := range p.Chain {
				chain[i] = c
			}
			m["chain"] = chain
		}
		if len(p.Outputs) > 0 {
			outs := make([]any, len(p.Outputs))
			for i, o := range p.Outputs {
				outs[i] = map[string]any{"id": o.ID, "file": o.File}
			}
			m["outputs"] = outs
		}
		phases = append(phases, m)
	}
	doc := map[string]any{
		"assembly_version": float64(AssemblyVersion),
		"pipeline":         a.Pipeline,
		"harness_name":     a.HarnessName,
		"source_revision":  float64(a.SourceRevision),
		"phases":           phases,
	}
	b, err := canon.Encode(doc)
	if err != nil {
		return nil, &fault.Error{Code: CodeAssembly, File: AssemblyFile, Err: err}
	}
	return append(b, '\n'), nil
}

// ParseAssembly decodes _assembly.json strictly (canon's JSON rules, no
// unknown keys) and validates it. A roster row may number itself "phase"
// or "n".
func ParseAssembly(data []byte) (Assembly, error) {
	v, err := canon.Parse(data, maxAssemblyBytes)
	if err != nil {
		return Assembly{}, &fault.Error{Code: CodeAssembly, File: AssemblyFile, Err: err}
	}
	d := jdec{}
	a := d.assembly(v)
	if d.err != nil {
		return Assembly{}, d.err
	}
	return a, a.Validate()
}

// ReadAssembly reads and parses an _assembly.json file.
func ReadAssembly(path string) (Assembly, []byte, error) {
	data, err := canon.ReadBounded(path, maxAssemblyBytes)
	if err != nil {
		return Assembly{}, nil, &fault.Error{Code: CodeAssembly, File: path, Err: err}
	}
	a, err := ParseAssembly(data)
	if e, ok := fault.As(err); ok {
		located := *e
		located.File = path
		return a, data, &located
	}
	return a, data, err
}

// AssemblySHA256 is the lowercase sha256 hex of the _assembly.json bytes,
// the value recorded as assembly_sha256.
func AssemblySHA256(assemblyBytes []byte) string {
	sum := sha256.Sum256(assemblyBytes)
	return hex.EncodeToString(sum[:])
}

// jdec converts a canon JSON value into an Assembly, keeping the first
// error with the path of the offending field.
type jdec struct{ err error }

func (d *jdec) fail(format string, a ...any) {
	if d.err == nil {
		d.err = errf(CodeAssembly, AssemblyFile, format, a...)
	}
}

func (d *jdec) object(v any, where string, allowed ...string) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		d.fail("%s is not an object", where)
		return nil
	}
	for _, k := range canon.SortedKeys(m) {
		known := false
		for _, a := range allowed {
			known = known || a == k
		}
		if !known {
			d.fail("%s: unknown key %q", where, k)
		}
	}
	return m
}

func (d *jdec) str(m map[string]any, key, where string, required bool) string {
	v, ok := m[key]
	if !ok {
		if required {
			d.fail("%s.%s is missing", where, key)
		}
		return ""
	}
	s, ok := v.(string)
	if !ok {
		d.fail("%s.%s is not a string", where, key)
	}
	return s
}

func (d *jdec) integer(v any, where string) int {
	f, ok := v.(float64)
	if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<31 {
		d.fail("%s is not an integer", where)
		return 0
	}
	return int(f)
}

func (d *jdec) assembly(v any) Assembly {
	m := d.object(v, "assembly", "assembly_version", "pipeline", "harness_name", "source_revision", "phases")
	if m == nil {
		return Assembly{}
	}
	if ver, ok := m["assembly_version"]; ok && d.integer(ver, "assembly_version") != AssemblyVersion {
		d.fail("assembly_version is not %d", AssemblyVersion)
	}
	a := Assembly{
		Pipeline:    d.str(m, "pipeline", "assembly", true),
		HarnessName: d.str(m, "harness_name", "assembly", true),
	}
	if rev, ok := m["source_revision"]; ok {
		a.SourceRevision = d.integer(rev, "source_revision")
	}
	rows, ok := m["phases"].([]any)
	if !ok {
		d.fail("phases is missing or not an array")
		return a
	}
	for i, r := range rows {
		where := fmt.Sprintf("phases[%d]", i)
		pm := d.object(r, where, "phase", "n", "kind", "skill", "pattern", "chain", "outputs")
		if pm == nil {
			return a
		}
		p := AssemblyPhase{
			Kind:    d.str(pm, "kind", where, true),
			Skill:   d.str(pm, "skill", where, false),
			Pattern: d.str(pm, "pattern", where, false),
		}
		num, hasPhase := pm["phase"]
		alt, hasN := pm["n"]
		switch {
		case hasPhase && hasN:
			if d.integer(num, where+".phase") != d.integer(alt, where+".n") {
				d.fail("%s: phase and n disagree", where)
			}
			p.N = d.integer(num, where+".phase")
		case hasPhase:
			p.N = d.integer(num, where+".phase")
		case hasN:
			p.N = d.integer(alt, where+".n")
		default:
			d.fail("%s.phase is missing", where)
		}
		if c, ok := pm["chain"]; ok {
			list, ok := c.([]any)
			if !ok {
				d.fail("%s.chain is not an array", where)
			}
			for j, x := range list {
				s, ok := x.(string)
				if !ok {
					d.fail("%s.chain[%d] is not a string", where, j)
				}
				p.Chain = append(p.Chain, s)
			}
		}
		if o, ok := pm["outputs"]; ok {
			list, ok := o.([]any)
			if !ok {
				d.fail("%s.outputs is not an array", where)
			}
			for j, x := range list {
				ow := fmt.Sprintf("%s.outputs[%d]", where, j)
				om := d.object(x, ow, "id", "file")
				if om == nil {
					return a
				}
				p.Outputs = append(p.Outputs, Output{ID: d.str(om, "id", ow, true), File: d.str(om, "file", ow, true)})
			}
		}
		a.Phases = append(a.Phases, p)
	}
	return a
}
