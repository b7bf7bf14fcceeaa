package runrecord

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"time"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/internal/yamlsize"
	"gopkg.in/yaml.v3"
)

// maxRecordBytes bounds a record read from disk; a 26-iteration loop is a
// few kilobytes, so 16 MiB leaves room for very long runs.
const maxRecordBytes = 16 << 20

var (
	sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)
	commitHex = regexp.MustCompile(`^(?:[0-9a-f]{40}|[0-9a-f]{64})$`)
)

// formatTime is the one timestamp spelling the writer uses: UTC, RFC 3339,
// whole seconds, e.g. 2026-09-16T18:02:00Z (a plain YAML timestamp).
func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func scalar(tag, value string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value}
}

func strNode(s string) *yaml.Node { return scalar("!!str", s) }

// quoted forces double quotes: a sha of only digits left plain would be read
// back as a number, so every sha is quoted whatever it contains.
func quoted(s string) *yaml.Node {
	n := scalar("!!str", s)
	n.Style = yaml.DoubleQuotedStyle
	return n
}

func intNode(i int) *yaml.Node        { return scalar("!!int", strconv.Itoa(i)) }
func nullNode() *yaml.Node            { return scalar("!!null", "null") }
func timeNode(t time.Time) *yaml.Node { return scalar("!!timestamp", formatTime(t)) }

type mapping struct{ n *yaml.Node }

func newMapping() mapping { return mapping{&yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}} }

func (m mapping) put(key string, v *yaml.Node) { m.n.Content = append(m.n.Content, strNode(key), v) }

// encodeRecord renders the record in the seed's field order with shas
// quoted and timestamps plain. Artifacts rows are block mappings, not the
// seed's flow mappings: the YAML emitter quotes any scalar containing ':'
// inside flow context, which would turn every at timestamp into a string.
// Encode is the record as the recorder writes it, byte for byte: a
// verifier holds a harness run's foundry-run.yml to this form.
func Encode(r *Record) ([]byte, error) { return encodeRecord(r) }

func encodeRecord(r *Record) ([]byte, error) {
	top := newMapping()
	top.put("run_record_version", intNode(r.Version))
	top.put("pipeline", strNode(r.Pipeline))
	top.put("run_slug", strNode(r.RunSlug))
	top.put("source_revision", intNode(r.SourceRevision))
	top.put("harness_name", strNode(r.HarnessName))
	if r.AssemblySHA256 == "" {
		top.put("assembly_sha256", nullNode())
	} else {
		top.put("assembly_sha256", quoted(r.AssemblySHA256))
	}
	if r.FoundryHead == "" {
		top.put("foundry_head", nullNode())
	} else {
		top.put("foundry_head", quoted(r.FoundryHead))
	}
	if r.FoundryModified {
		top.put("foundry_modified", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
	}
	top.put("started_at", timeNode(r.StartedAt))
	if r.FinishedAt == nil {
		top.put("finished_at", nullNode())
	} else {
		top.put("finished_at", timeNode(*r.FinishedAt))
	}
	top.put("status", strNode(r.Status))
	phases := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for _, p := range r.Phases {
		pm := newMapping()
		pm.put("n", intNode(p.N))
		pm.put("kind", strNode(p.Kind))
		if p.Kind == KindBranch {
			pm.put("pattern", strNode(p.Pattern))
			if p.Selected != "" {
				pm.put("selected", strNode(p.Selected))
			}
		} else {
			pm.put("skill", strNode(p.Skill))
		}
		pm.put("status", strNode(p.Status))
		if p.Kind == KindLoop || p.Iterations > 0 {
			pm.put("iterations", intNode(p.Iterations))
		}
		if len(p.Artifacts) > 0 {
			rows := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
			for _, a := range p.Artifacts {
				am := newMapping()
				am.put("id", strNode(a.ID))
				am.put("file", strNode(a.File))
				am.put("at", timeNode(a.At))
				if a.Iteration > 0 {
					am.put("iteration", intNode(a.Iteration))
				}
				rows.Content = append(rows.Content, am.n)
			}
			pm.put("artifacts", rows)
		}
		phases.Content = append(phases.Content, pm.n)
	}
	top.put("phases", phases)

	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	doc := &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{top.n}}
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// decodeResult is a parsed record plus what the reader noticed on the way.
type decodeResult struct {
	rec      *Record
	warnings []string
}

// decodeRecord parses foundry-run.yml. A YAML syntax error is
// CodeUnparseable; well-formed YAML that is not a version-1 record is
// CodeInvalid. An unquoted sha (a YAML number) is ignored with a warning.
func decodeRecord(data []byte, file string) (decodeResult, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return decodeResult{}, &fault.Error{Code: CodeUnparseable, File: file, Message: "cannot be parsed (a crash mid-write?)", Err: err}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return decodeResult{}, errf(CodeUnparseable, file, "is empty (a crash mid-write?)")
	}
	d := &ydec{file: file}
	// The writer emits exactly one document and never an alias. A later
	// document would be silently dropped, and aliases let a small file
	// stand for an enormous record, so both mark a record not to trust.
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return decodeResult{}, &fault.Error{Code: CodeUnparseable, File: file, Message: "cannot be parsed (a crash mid-write?)", Err: err}
	default:
		d.fail(&next, "holds more than one YAML document; a run record is one")
		return decodeResult{}, d.err
	}
	if _, over := yamlsize.Check(&doc, 2*maxRecordBytes); over != nil {
		d.fail(over, "aliases expand it past %d bytes; a run record spells every value out", 2*maxRecordBytes)
		return decodeResult{}, d.err
	}
	if a := findAlias(&doc); a != nil {
		d.fail(a, "uses a YAML alias (*%s); a run record spells every value out", a.Value)
		return decodeResult{}, d.err
	}
	rec := d.record(doc.Content[0])
	if d.err != nil {
		return decodeResult{}, d.err
	}
	return decodeResult{rec: rec, warnings: d.warnings}, nil
}

// findAlias returns the first alias node under n, without following any.
func findAlias(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode {
		return n
	}
	for _, c := range n.Content {
		if a := findAlias(c); a != nil {
			return a
		}
	}
	return nil
}

type ydec struct {
	file     string
	err      error
	warnings []string
}

func (d *ydec) fail(n *yaml.Node, format string, a ...any) {
	if d.err == nil {
		msg := fmt.Sprintf(format, a...)
		if n != nil && n.Line > 0 {
			msg = fmt.Sprintf("line %d, column %d: %s", n.Line, n.Column, msg)
		}
		d.err = errf(CodeInvalid, d.file, "%s", msg)
	}
}

func (d *ydec) warn(format string, a ...any) {
	d.warnings = append(d.warnings, fmt.Sprintf(format, a...))
}

// fields indexes a mapping node by key, rejecting duplicate and non-string
// keys (yaml.v3 does not check duplicates when decoding to a Node).
func (d *ydec) fields(n *yaml.Node, where string) (map[string]*yaml.Node, []string) {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n == nil || n.Kind != yaml.MappingNode {
		d.fail(n, "%s is not a mapping", where)
		return nil, nil
	}
	out := map[string]*yaml.Node{}
	var order []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
			d.fail(k, "%s has a non-string key", where)
			return nil, nil
		}
		if _, dup := out[k.Value]; dup {
			d.fail(k, "%s: key %q appears twice", where, k.Value)
			return nil, nil
		}
		for v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		out[k.Value] = v
		order = append(order, k.Value)
	}
	return out, order
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

func (d *ydec) str(f map[string]*yaml.Node, key, where string, required bool) string {
	n, ok := f[key]
	if !ok || isNull(n) {
		if required {
			d.fail(n, "%s.%s is missing", where, key)
		}
		return ""
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		d.fail(n, "%s.%s is not a string", where, key)
		return ""
	}
	return n.Value
}

func (d *ydec) integer(f map[string]*yaml.Node, key, where string, required bool) int {
	n, ok := f[key]
	if !ok || isNull(n) {
		if required {
			d.fail(n, "%s.%s is missing", where, key)
		}
		return 0
	}
	var i int
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&i) != nil || i < 0 {
		d.fail(n, "%s.%s is not a non-negative integer", where, key)
		return 0
	}
	return i
}

func (d *ydec) timestamp(f map[string]*yaml.Node, key, where string) *time.Time {
	n, ok := f[key]
	if !ok || isNull(n) {
		return nil
	}
	var t time.Time
	var err error
	switch {
	case n.Kind != yaml.ScalarNode:
		err = fmt.Errorf("not a scalar")
	case n.ShortTag() == "!!timestamp":
		err = n.Decode(&t)
	case n.ShortTag() == "!!str":
		t, err = time.Parse(time.RFC3339Nano, n.Value)
	default:
		err = fmt.Errorf("tagged %s", n.ShortTag())
	}
	if err != nil {
		d.fail(n, "%s.%s is not a timestamp", where, key)
		return nil
	}
	return &t
}

// sha reads a sha-valued field. Only a YAML string is trusted: a bare sha
// made of digits (or digits and one 'e') resolves to a number whose digits
// may already have been rounded, so it is ignored with a warning.
func (d *ydec) sha(f map[string]*yaml.Node, key string, valid *regexp.Regexp) string {
	n, ok := f[key]
	if !ok || isNull(n) {
		return ""
	}
	if n.Kind != yaml.ScalarNode {
		d.warn("%s is not a scalar; ignored", key)
		return ""
	}
	if n.ShortTag() != "!!str" {
		d.warn("%s is unquoted and reads as a YAML %s (%s); its digits are not trustworthy, so it is ignored", key, n.ShortTag()[2:], n.Value)
		return ""
	}
	if !valid.MatchString(n.Value) {
		d.warn("%s %q is not a lowercase hex digest; ignored", key, n.Value)
		return ""
	}
	return n.Value
}

var (
	runStatuses   = map[string]bool{RunRunning: true, RunComplete: true, RunFailed: true, RunCancelled: true}
	phaseStatuses = map[string]bool{PhasePending: true, PhaseRunning: true, PhaseDone: true, PhaseFailed: true, PhaseSkipped: true}
	recordKeys    = map[string]bool{"run_record_version": true, "pipeline": true, "run_slug": true, "source_revision": true,
		"harness_name": true, "assembly_sha256": true, "foundry_head": true, "foundry_modified": true, "started_at": true, "finished_at": true,
		"status": true, "phases": true}
)

// Keys a phase and an artifacts row may carry (phase is the seed's
// spelling of n).
var (
	phaseKeys    = map[string]bool{"n": true, "phase": true, "kind": true, "skill": true, "pattern": true, "selected": true, "status": true, "iterations": true, "artifacts": true}
	artifactKeys = map[string]bool{"id": true, "file": true, "at": true, "iteration": true}
)

// unknown warns about each key of order not in known: a reader shows
// it, and a verifier, which treats every warning as a failure, refuses it.
func (d *ydec) unknown(order []string, known map[string]bool, where string) {
	for _, k := range order {
		if !known[k] {
			d.warn("%s: unknown field %q ignored", where, k)
		}
	}
}

func (d *ydec) record(root *yaml.Node) *Record {
	f, order := d.fields(root, "record")
	if f == nil {
		return nil
	}
	for _, k := range order {
		if !recordKeys[k] {
			d.warn("unknown field %q ignored", k)
		}
	}
	r := &Record{Version: d.integer(f, "run_record_version", "record", true)}
	if d.err == nil && r.Version != RecordVersion {
		d.fail(f["run_record_version"], "run_record_version %d is not supported (want %d)", r.Version, RecordVersion)
	}
	r.Pipeline = d.str(f, "pipeline", "record", true)
	r.RunSlug = d.str(f, "run_slug", "record", false)
	r.SourceRevision = d.integer(f, "source_revision", "record", false)
	r.HarnessName = d.str(f, "harness_name", "record", false)
	r.AssemblySHA256 = d.sha(f, "assembly_sha256", sha256Hex)
	r.FoundryHead = d.sha(f, "foundry_head", commitHex)
	if n := f["foundry_modified"]; n != nil {
		if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!bool" {
			r.FoundryModified = n.Value == "true"
		} else {
			d.warn("foundry_modified %q is not true or false; ignored", n.Value)
		}
	}
	if t := d.timestamp(f, "started_at", "record"); t != nil {
		r.StartedAt = *t
	}
	r.FinishedAt = d.timestamp(f, "finished_at", "record")
	r.Status = d.str(f, "status", "record", true)
	if d.err == nil && !runStatuses[r.Status] {
		d.fail(f["status"], "status %q is not running, complete, failed or cancelled", r.Status)
	}
	seq := f["phases"]
	if seq == nil || seq.Kind != yaml.SequenceNode {
		d.fail(seq, "record.phases is missing or not a sequence")
		return nil
	}
	seen := map[int]bool{}
	for i, pn := range seq.Content {
		where := fmt.Sprintf("phases[%d]", i)
		p := d.phase(pn, where)
		if d.err != nil {
			return nil
		}
		if seen[p.N] {
			d.fail(pn, "%s: phase %d appears twice", where, p.N)
			return nil
		}
		seen[p.N] = true
		r.Phases = append(r.Phases, p)
	}
	if d.err != nil {
		return nil
	}
	return r
}

func (d *ydec) phase(n *yaml.Node, where string) Phase {
	f, order := d.fields(n, where)
	if f == nil {
		return Phase{}
	}
	d.unknown(order, phaseKeys, where)
	var p Phase
	_, hasN := f["n"]
	_, hasPhase := f["phase"]
	switch {
	case hasN && hasPhase:
		p.N = d.integer(f, "n", where, true)
		if alt := d.integer(f, "phase", where, true); d.err == nil && alt != p.N {
			d.fail(n, "%s: n %d and phase %d disagree", where, p.N, alt)
		}
	case hasPhase:
		p.N = d.integer(f, "phase", where, true)
	default:
		p.N = d.integer(f, "n", where, true)
	}
	p.Kind = d.str(f, "kind", where, true)
	p.Skill = d.str(f, "skill", where, false)
	p.Pattern = d.str(f, "pattern", where, false)
	p.Selected = d.str(f, "selected", where, false)
	p.Status = d.str(f, "status", where, true)
	if d.err == nil && !phaseStatuses[p.Status] {
		d.fail(f["status"], "%s.status %q is not pending, running, done, failed or skipped", where, p.Status)
	}
	p.Iterations = d.integer(f, "iterations", where, false)
	if an, ok := f["artifacts"]; ok && !isNull(an) {
		if an.Kind != yaml.SequenceNode {
			d.fail(an, "%s.artifacts is not a sequence", where)
			return p
		}
		for j, row := range an.Content {
			aw := fmt.Sprintf("%s.artifacts[%d]", where, j)
			af, order := d.fields(row, aw)
			if af == nil {
				return p
			}
			d.unknown(order, artifactKeys, aw)
			a := Artifact{
				ID:        d.str(af, "id", aw, true),
				File:      d.str(af, "file", aw, true),
				Iteration: d.integer(af, "iteration", aw, false),
			}
			if t := d.timestamp(af, "at", aw); t != nil {
				a.At = *t
			}
			p.Artifacts = append(p.Artifacts, a)
		}
	}
	return p
}
