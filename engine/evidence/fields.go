package evidence

import (
	"fmt"
	"math"
	"regexp"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/internal/suggest"
)

// MaxIDLen bounds case, system and axis ids.
const MaxIDLen = 64

// Fail builds an *fault.Error; field names where the value went wrong.
func Fail(code, field, format string, a ...any) *fault.Error {
	return &fault.Error{Code: code, Path: field, Message: fmt.Sprintf(format, a...)}
}

var idPattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// ID reads an id: lowercase letters and digits in hyphen-separated
// segments, at most MaxIDLen characters.
func ID(v any, field string) (string, error) {
	s, ok := v.(string)
	if !ok || len(s) > MaxIDLen || !idPattern.MatchString(s) {
		return "", Fail(fault.Parse, field, "must be an id: lowercase letters and digits in hyphen-separated segments, at most %d characters", MaxIDLen)
	}
	return s, nil
}

// ClosedKeys rejects any key of m outside allowed, naming the first in
// byte order so the message is the same on every run.
func ClosedKeys(m map[string]any, field string, allowed ...string) error {
	if k, bad := canon.UnknownKey(m, allowed...); bad {
		e := Fail(fault.Parse, field, "unknown key %q", k)
		e.Hint = suggest.DidYouMean(k, allowed)
		return e
	}
	return nil
}

// Object reads a JSON object.
func Object(v any, field string) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, Fail(fault.Parse, field, "must be an object")
	}
	return m, nil
}

// Closed reads a JSON object whose keys are among allowed.
func Closed(v any, field string, allowed ...string) (map[string]any, error) {
	m, err := Object(v, field)
	if err != nil {
		return nil, err
	}
	return m, ClosedKeys(m, field, allowed...)
}

// List reads a JSON list of min to max entries; too many is a budget
// rejection, too few a parse one.
func List(v any, field string, min, max int) ([]any, error) {
	l, ok := v.([]any)
	if !ok {
		return nil, Fail(fault.Parse, field, "must be a list")
	}
	if len(l) < min {
		return nil, Fail(fault.Parse, field, "must hold at least %d entries", min)
	}
	if len(l) > max {
		return nil, Fail(fault.BudgetExhausted, field, "holds %d entries, over the bound of %d", len(l), max)
	}
	return l, nil
}

// Entries reads a list of min to max entries (as List does) and parses
// entry i with parse, which names it field[i] in its errors. An empty list
// gives a nil slice.
func Entries[T any](v any, field string, min, max int, parse func(v any, at string) (T, error)) ([]T, error) {
	raw, err := List(v, field, min, max)
	if err != nil {
		return nil, err
	}
	var out []T
	for i, e := range raw {
		x, err := parse(e, fmt.Sprintf("%s[%d]", field, i))
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

// Keyed reads an object whose keys are 1 to 256 bytes (what names them in
// the message: "price keys are ...") and parses the value under key k with
// parse, which names it field["k"]. Keys are read in byte order, so the
// first bad entry named is the same on every run.
func Keyed[T any](v any, field, what string, parse func(v any, at string) (T, error)) (map[string]T, error) {
	m, err := Object(v, field)
	if err != nil {
		return nil, err
	}
	out := make(map[string]T, len(m))
	for _, k := range canon.SortedKeys(m) {
		at := fmt.Sprintf("%s[%q]", field, k)
		if k == "" || len(k) > 256 {
			return nil, Fail(fault.Parse, at, "%s keys are 1 to 256 characters", what)
		}
		if out[k], err = parse(m[k], at); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Text reads a non-empty string of at most max bytes.
func Text(v any, field string, max int) (string, error) {
	s, ok := v.(string)
	if !ok || s == "" || len(s) > max {
		return "", Fail(fault.Parse, field, "must be a non-empty string of at most %d bytes", max)
	}
	return s, nil
}

// DigestField reads a sha256: digest token.
func DigestField(v any, field string) (string, error) {
	s, ok := v.(string)
	if !ok || !canon.IsDigest(s) {
		return "", Fail(fault.Parse, field, "must be a sha256: digest")
	}
	return s, nil
}

// MaxReportCount bounds every count a report records, as upstream's
// report parsers do (u32).
const MaxReportCount = math.MaxUint32

// CountField reads a report count: an integer in 0..MaxReportCount.
func CountField(v any, field string) (int64, error) {
	f, ok := v.(float64)
	if !ok || f < 0 || f > MaxReportCount || f != math.Trunc(f) {
		return 0, Fail(fault.Parse, field, "must be an integer in 0..%d", int64(MaxReportCount))
	}
	return int64(f), nil
}

// NonNegative reads a finite number >= 0.
func NonNegative(v any, field string) (float64, error) {
	f, ok := v.(float64)
	if !ok || f < 0 {
		return 0, Fail(fault.Parse, field, "must be a non-negative number")
	}
	return f, nil
}

// ParseWork reads a recorded work ledger {steps, agentCalls, units}.
func ParseWork(v any, field string) (Work, error) {
	m, err := Closed(v, field, "steps", "agentCalls", "units")
	if err != nil {
		return Work{}, err
	}
	var w Work
	for _, f := range []struct {
		key string
		dst *int64
	}{{"steps", &w.Steps}, {"agentCalls", &w.AgentCalls}, {"units", &w.Units}} {
		if *f.dst, err = CountField(m[f.key], field+"."+f.key); err != nil {
			return Work{}, err
		}
	}
	return w, nil
}

// CaseFields is one workload case as configs and reports write it: a
// unique id, interface args and expected interface outputs. Object is the
// whole entry, for callers that admit keys of their own (a foundry split).
type CaseFields struct {
	ID           string
	Args, Expect map[string]any
	Object       map[string]any
}

// ParseCases reads a case list of 1 to max entries, each a closed object
// {id, args, expect} plus the extra keys the caller admits, with unique
// ids.
func ParseCases(v any, field string, max int, extra ...string) ([]CaseFields, error) {
	raw, err := List(v, field, 1, max)
	if err != nil {
		return nil, err
	}
	allowed := append([]string{"id", "args", "expect"}, extra...)
	cases := make([]CaseFields, 0, len(raw))
	seen := map[string]bool{}
	for i, rc := range raw {
		at := fmt.Sprintf("%s[%d]", field, i)
		c, err := Closed(rc, at, allowed...)
		if err != nil {
			return nil, err
		}
		id, err := ID(c["id"], at+".id")
		if err != nil {
			return nil, err
		}
		if seen[id] {
			return nil, Fail(fault.Parse, at+".id", "duplicate case id %q", id)
		}
		seen[id] = true
		args, err := Object(c["args"], at+".args")
		if err != nil {
			return nil, err
		}
		expect, err := Object(c["expect"], at+".expect")
		if err != nil {
			return nil, err
		}
		cases = append(cases, CaseFields{ID: id, Args: args, Expect: expect, Object: c})
	}
	return cases, nil
}

// CaseClaim is what every report records for a case it ran: the case id,
// the pass claim, the run's outcome and interface outputs, the expected
// outputs, the stored receipt and the run's work.
type CaseClaim struct {
	ID            string
	Passed        bool
	Outcome       string
	Outputs       map[string]any
	Expect        map[string]any
	ReceiptDigest string
	Work          Work
}

// ParseCaseRecord reads a case record: an object whose keys are among
// keys (the claim's and the report's own), with the fields every case
// record carries. It returns the object for the report's own fields; at
// names the record in errors.
func ParseCaseRecord(v any, at string, keys ...string) (map[string]any, CaseClaim, error) {
	m, err := Closed(v, at, keys...)
	if err != nil {
		return nil, CaseClaim{}, err
	}
	c, err := parseCaseClaim(m, at)
	if err != nil {
		return nil, CaseClaim{}, err
	}
	return m, c, nil
}

// parseCaseClaim reads the fields every case record carries from m.
// A suspended run cannot be a claim: only complete, failed and stuck are.
func parseCaseClaim(m map[string]any, at string) (CaseClaim, error) {
	var c CaseClaim
	var err error
	if c.ID, err = ID(m["id"], at+".id"); err != nil {
		return c, err
	}
	var ok bool
	if c.Passed, ok = m["passed"].(bool); !ok {
		return c, Fail(fault.Parse, at+".passed", "must be a boolean")
	}
	switch c.Outcome, _ = m["outcome"].(string); c.Outcome {
	case "complete", "failed", "stuck":
	default:
		return c, Fail(fault.Parse, at+".outcome", "must be complete, failed or stuck")
	}
	if c.Outputs, err = Object(m["outputs"], at+".outputs"); err != nil {
		return c, err
	}
	if c.Expect, err = Object(m["expect"], at+".expect"); err != nil {
		return c, err
	}
	if c.ReceiptDigest, err = DigestField(m["receiptDigest"], at+".receiptDigest"); err != nil {
		return c, err
	}
	if c.Work, err = ParseWork(m["work"], at+".work"); err != nil {
		return c, err
	}
	return c, nil
}

// InConfigFile gives a config's own field error (one with a Path and no
// File) the config file's name and the line:column of that field, so
// bench and foundry configs report mistakes alike. Errors of the manifests
// a config names already carry their own file and pass through unchanged.
func InConfigFile(path string, err error) error {
	e, ok := fault.As(err)
	if !ok || e.Path == "" || e.File != "" {
		return err
	}
	located := *e
	located.File = path
	located.Line, located.Column = canon.FieldPosition(path, e.Path, e.Message)
	located.Message, located.Hint = e.Message+e.Hint, ""
	return &located
}
