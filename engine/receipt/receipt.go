// Package receipt holds the algal.run.v1 run receipt: the closed key sets
// a receipt may carry, strict validation, the intrinsic digest (over the
// canonical receipt minus its own "digest" key), the ordered diff
// verification reports when a replayed receipt differs from the recorded
// one, and the typed model (Receipt, Cell, Event, ...) code reads and
// writes receipts through.
//
// A receipt has two forms. Its identity is the canonical value
// (map[string]any): the digest hashes it, the store keeps it, Diff
// compares it, and tamper detection must notice a change in any leaf of
// it. Code that produces or reads fields uses the typed model instead:
// the run engine builds a Receipt and turns it into the value once
// (Receipt.Value) before sealing; verification, counterfactual replay and
// the reports decode a validated value once (Decode, FromValue) and read
// fields with the compiler's help. The two forms convert exactly both
// ways, byte for byte (the round-trip tests over the upstream examples,
// the record-shape samples and every valid tampered receipt hold it), so
// adding a field means adding it to the key sets, Validate and the model.
package receipt

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
)

// Contract is the receipt contract literal.
const Contract = "algal.run.v1"

// Runtime stamp written into every receipt.
const (
	RuntimeName    = "algal"
	RuntimeVersion = "0.1.0"
)

// Bounds of a receipt.
const (
	MaxCells      = 65_536
	MaxPathUnits  = 4_096
	MaxEffects    = 16_448
	MaxEvents     = 4_096
	MaxArgsBytes  = 1_048_576
	MaxBytes      = 67_108_864
	MaxNodes      = 1_000_000
	MaxMessage    = 2_048
	MaxExecutor   = 256
	MaxKey        = 256
	MaxVersion    = 128
	MaxModel      = 128
	MaxWake       = 16
	MaxOutcomeLen = 32
	MaxDepth      = 64
	// MaxName bounds a cell record's via and slot.name (native validator).
	MaxName         = 128
	MaxSafeInteger  = 9_007_199_254_740_991
	PlaceholderHash = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
)

// Outcomes of a run.
const (
	Complete  = "complete"
	Failed    = "failed"
	Stuck     = "stuck"
	Suspended = "suspended"
)

// Cell statuses.
const (
	StatusCommitted = "committed"
	StatusSkipped   = "skipped"
	StatusFailed    = "failed"
	StatusSuspended = "suspended"
)

// Closed key sets.
var (
	TopKeys    = []string{"contract", "runtime", "manifestDigest", "manifestKey", "args", "outcome", "cells", "effects", "events", "work", "failure", "digest"}
	CellKeys   = []string{"status", "outputs", "failure", "work", "effectDigest", "toolCalls", "shadowOut", "rounds", "items", "via", "slot"}
	EffectKeys = []string{"requestDigest", "output", "error", "executor", "usage", "cached", "retryable", "wake", "configurationDigest"}
	EventKeys  = []string{"seq", "kind", "path", "digest", "outcome"}
	EventKinds = []string{"run.start", "cell.skip", "cell.commit", "cell.fail", "cell.suspend", "effect", "run.end"}
)

// committedKeys are the keys a committed cell record may carry: status,
// work and outputs, and the record keys of every cell kind (the cell-kind
// table, manifest.KindSpec.Record).
var committedKeys = append([]string{"status", "work", "outputs"}, manifest.RecordKeys()...)

func invalid(loc, format string, a ...any) *fault.Error {
	return &fault.Error{Code: fault.Parse, Message: "receipt " + loc + ": " + fmt.Sprintf(format, a...)}
}

// Digest returns the intrinsic digest of r: the digest of its canonical form
// without the "digest" key. r is not modified.
func Digest(r map[string]any) (string, error) {
	if _, ok := r["digest"]; !ok {
		return canon.Digest(r)
	}
	body := make(map[string]any, len(r))
	for k, v := range r {
		if k != "digest" {
			body[k] = v
		}
	}
	return canon.Digest(body)
}

// Seal writes r's intrinsic digest into r["digest"] and returns it.
func Seal(r map[string]any) (string, error) {
	delete(r, "digest")
	d, err := canon.Digest(r)
	if err != nil {
		return "", err
	}
	r["digest"] = d
	return d, nil
}

// SealEncoded is Seal that also returns the sealed receipt's canonical
// bytes (what the runs namespace stores), from the one encoding the
// digest needs.
func SealEncoded(r map[string]any) (digest string, canonical []byte, err error) {
	delete(r, "digest")
	canonical, digest, err = canon.EncodeSealed(r, "digest", canon.DigestBytes)
	if err != nil {
		return "", nil, err
	}
	r["digest"] = digest
	return digest, canonical, nil
}

// StorageRef is the key a receipt is stored under in the runs namespace:
// the digest of the full receipt including its own digest field.
func StorageRef(r map[string]any) (string, error) { return canon.Digest(r) }

// object reads a JSON object whose keys are among allowed.
func object(v any, loc string, allowed []string) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, invalid(loc, "must be an object")
	}
	return m, closed(m, allowed, loc)
}

func closed(m map[string]any, allowed []string, loc string) error {
	if k, bad := canon.UnknownKey(m, allowed...); bad {
		return invalid(loc, "unknown key %q", k)
	}
	return nil
}

func text(m map[string]any, key, loc string, max int, required bool) (string, bool, error) {
	v, ok := m[key]
	if !ok {
		if required {
			return "", false, invalid(loc, "missing %q", key)
		}
		return "", false, nil
	}
	s, isText := v.(string)
	if !isText {
		return "", false, invalid(loc, "%q must be text", key)
	}
	if max > 0 && canon.UTF16Len(s) > max {
		return "", false, invalid(loc, "%q exceeds %d characters", key, max)
	}
	return s, true, nil
}

// array reads the array under key, of at most max entries (what names
// them in the message: "more than 4096 records").
func array(m map[string]any, key string, max int, what string) ([]any, error) {
	l, ok := m[key].([]any)
	if !ok {
		return nil, invalid(key, "must be an array")
	}
	if len(l) > max {
		return nil, invalid(key, "more than %d %s", max, what)
	}
	return l, nil
}

func integer(m map[string]any, key, loc string, required bool) (int, bool, error) {
	v, ok := m[key]
	if !ok {
		if required {
			return 0, false, invalid(loc, "missing %q", key)
		}
		return 0, false, nil
	}
	f, isNum := v.(float64)
	if !isNum || f < 0 || f != math.Trunc(f) || f > MaxSafeInteger {
		return 0, false, invalid(loc, "%q must be a non-negative safe integer", key)
	}
	return int(f), true, nil
}

func digestField(m map[string]any, key, loc string, required bool) error {
	s, ok, err := text(m, key, loc, 0, required)
	if err != nil {
		return err
	}
	if ok && !canon.IsDigest(s) {
		return invalid(loc, "%q must be a sha256 digest", key)
	}
	return nil
}

// failureRecord checks a {code, message[, path]} record. maxMessage is
// MaxMessage for effect errors; the native validator bounds cell and run
// failure messages only by the receipt size (MaxBytes), since the runtime
// writes activation errors into them uncut.
func failureRecord(v any, loc string, withPath bool, maxMessage int) error {
	allowed := []string{"code", "message"}
	if withPath {
		allowed = append(allowed, "path")
	}
	m, err := object(v, loc, allowed)
	if err != nil {
		return err
	}
	code, _, err := text(m, "code", loc, 0, true)
	if err != nil {
		return err
	}
	if !fault.IsReceiptCode(code) {
		return invalid(loc, "unknown failure code %q", code)
	}
	if _, _, err := text(m, "message", loc, maxMessage, true); err != nil {
		return err
	}
	if withPath {
		if _, _, err := text(m, "path", loc, MaxPathUnits, true); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks r against the algal.run.v1 structure: closed key sets at
// every level, field types, bounds and the status-dependent shape of cell
// records. It does not check the digest; see Check.
func Validate(v any) error {
	r, ok := v.(map[string]any)
	if !ok {
		return invalid("", "must be an object")
	}
	// Whole-receipt bounds first, as the native validator does, so a
	// hostile receipt is rejected before any per-field work.
	for _, check := range receiptChecks {
		if err := check(r); err != nil {
			return err
		}
	}
	return nil
}

// receiptChecks are Validate's steps in order: the first error found is
// the one reported.
var receiptChecks = []func(r map[string]any) error{
	structuralBounds,
	func(r map[string]any) error { return closed(r, TopKeys, "top level") },
	validateContract,
	validateRuntime,
	validateManifestFields,
	validateArgs,
	validateOutcome,
	validateCells,
	validateEffects,
	validateEvents,
	validateWork,
	validateRunFailure,
	func(r map[string]any) error { return digestField(r, "digest", "top level", true) },
}

func validateContract(r map[string]any) error {
	c, _, err := text(r, "contract", "top level", 0, true)
	if err != nil {
		return err
	}
	if c != Contract {
		return invalid("contract", "must be %q", Contract)
	}
	return nil
}

func validateRuntime(r map[string]any) error {
	rt, ok := r["runtime"].(map[string]any)
	if !ok {
		return invalid("runtime", "must be an object")
	}
	if err := closed(rt, []string{"name", "version"}, "runtime"); err != nil {
		return err
	}
	if n, _, err := text(rt, "name", "runtime", 0, true); err != nil {
		return err
	} else if n != RuntimeName {
		return invalid("runtime", "name must be %q", RuntimeName)
	}
	_, _, err := text(rt, "version", "runtime", MaxVersion, true)
	return err
}

func validateManifestFields(r map[string]any) error {
	if err := digestField(r, "manifestDigest", "top level", true); err != nil {
		return err
	}
	_, _, err := text(r, "manifestKey", "top level", MaxKey, true)
	return err
}

func validateArgs(r map[string]any) error {
	args, ok := r["args"].(map[string]any)
	if !ok {
		return invalid("args", "must be an object")
	}
	for _, k := range canon.SortedKeys(args) {
		if _, ok := args[k].(map[string]any); !ok {
			return invalid("args."+k, "must be an object of ports")
		}
	}
	if n, err := canon.EncodedSize(args); err != nil || n > MaxArgsBytes {
		return invalid("args", "exceeds %d canonical bytes", MaxArgsBytes)
	}
	return nil
}

func validateOutcome(r map[string]any) error {
	outcome, _, err := text(r, "outcome", "top level", 0, true)
	if err != nil {
		return err
	}
	if !slices.Contains([]string{Complete, Failed, Stuck, Suspended}, outcome) {
		return invalid("outcome", "unknown outcome %q", outcome)
	}
	return nil
}

func validateCells(r map[string]any) error {
	cells, ok := r["cells"].(map[string]any)
	if !ok {
		return invalid("cells", "must be an object")
	}
	if len(cells) > MaxCells {
		return invalid("cells", "more than %d records", MaxCells)
	}
	for _, p := range canon.SortedKeys(cells) {
		if p == "" || canon.UTF16Len(p) > MaxPathUnits {
			return invalid("cells", "bad cell path %q", p)
		}
		if err := validateCell(cells[p], "cells."+p); err != nil {
			return err
		}
	}
	return nil
}

func validateEffects(r map[string]any) error {
	effects, err := array(r, "effects", MaxEffects, "records")
	if err != nil {
		return err
	}
	for i, e := range effects {
		if err := validateEffect(e, "effects["+strconv.Itoa(i)+"]"); err != nil {
			return err
		}
	}
	return nil
}

func validateEvents(r map[string]any) error {
	events, err := array(r, "events", MaxEvents, "events")
	if err != nil {
		return err
	}
	for i, e := range events {
		if err := validateEvent(e, i, "events["+strconv.Itoa(i)+"]"); err != nil {
			return err
		}
	}
	return nil
}

var workKeys = []string{"steps", "agentCalls", "units"}

func validateWork(r map[string]any) error {
	work, err := object(r["work"], "work", workKeys)
	if err != nil {
		return err
	}
	for _, k := range workKeys {
		if _, _, err := integer(work, k, "work", true); err != nil {
			return err
		}
	}
	return nil
}

// validateRunFailure checks the run failure record, which a failed run
// must carry.
func validateRunFailure(r map[string]any) error {
	f, ok := r["failure"]
	if ok {
		return failureRecord(f, "failure", true, MaxBytes)
	}
	if r["outcome"] == Failed {
		return invalid("failure", "a failed run must record its failure")
	}
	return nil
}

func validateCell(v any, loc string) error {
	c, err := object(v, loc, CellKeys)
	if err != nil {
		return err
	}
	status, _, err := text(c, "status", loc, 0, true)
	if err != nil {
		return err
	}
	if _, _, err := integer(c, "work", loc, true); err != nil {
		return err
	}
	allowed, err := statusShape(c, status, loc)
	if err != nil {
		return err
	}
	if err := closed(c, allowed, loc); err != nil {
		return err
	}
	for _, check := range cellChecks {
		if err := check(c, loc); err != nil {
			return err
		}
	}
	return nil
}

// statusShape checks what a cell record's status requires of it and
// returns the keys that status allows.
func statusShape(c map[string]any, status, loc string) ([]string, error) {
	switch status {
	case StatusSkipped:
		if c["work"] != 0.0 {
			return nil, invalid(loc, "a skipped cell spends no work")
		}
		return []string{"status", "work"}, nil
	case StatusCommitted:
		return committedKeys, nil
	case StatusFailed:
		f, ok := c["failure"]
		if !ok {
			return nil, invalid(loc, "a failed cell records its failure")
		}
		if err := failureRecord(f, loc+".failure", false, MaxBytes); err != nil {
			return nil, err
		}
		return []string{"status", "work", "failure", "slot"}, nil
	case StatusSuspended:
		return []string{"status", "work", "slot"}, nil
	}
	return nil, invalid(loc, "unknown status %q", status)
}

// cellChecks are validateCell's per-field steps after the status shape,
// in order.
var cellChecks = []func(c map[string]any, loc string) error{
	cellOutputs,
	func(c map[string]any, loc string) error { return digestField(c, "effectDigest", loc, false) },
	cellToolCalls,
	cellRounds,
	cellItems,
	func(c map[string]any, loc string) error {
		_, _, err := text(c, "via", loc, MaxName, false)
		return err
	},
	cellSlot,
}

func cellOutputs(c map[string]any, loc string) error {
	o, ok := c["outputs"]
	if !ok {
		return nil
	}
	if m, isObj := o.(map[string]any); !isObj || len(m) == 0 {
		return invalid(loc+".outputs", "must be a non-empty object")
	}
	return nil
}

func cellToolCalls(c map[string]any, loc string) error {
	tc, ok := c["toolCalls"]
	if !ok {
		return nil
	}
	l, isList := tc.([]any)
	if !isList || len(l) == 0 {
		return invalid(loc+".toolCalls", "must be a non-empty array")
	}
	for i, e := range l {
		if err := toolCall(e, loc+".toolCalls["+strconv.Itoa(i)+"]"); err != nil {
			return err
		}
	}
	return nil
}

// toolCall checks one {fn, inputs, output} entry of a cell's tool calls.
func toolCall(e any, loc string) error {
	m, err := object(e, loc, []string{"fn", "inputs", "output"})
	if err != nil {
		return err
	}
	if _, _, err := text(m, "fn", loc, 0, true); err != nil {
		return err
	}
	if _, ok := m["inputs"].(map[string]any); !ok {
		return invalid(loc, "inputs must be an object")
	}
	if _, ok := m["output"]; !ok {
		return invalid(loc, "missing \"output\"")
	}
	return nil
}

func cellRounds(c map[string]any, loc string) error {
	n, ok, err := integer(c, "rounds", loc, false)
	if err == nil && ok && n < 2 {
		err = invalid(loc, "rounds is recorded only when more than one round ran")
	}
	return err
}

func cellItems(c map[string]any, loc string) error {
	n, ok, err := integer(c, "items", loc, false)
	if err == nil && ok && n < 1 {
		err = invalid(loc, "items is recorded only for a non-empty list")
	}
	return err
}

func cellSlot(c map[string]any, loc string) error {
	s, ok := c["slot"]
	if !ok {
		return nil
	}
	loc += ".slot"
	m, err := object(s, loc, []string{"name", "mode"})
	if err != nil {
		return err
	}
	if _, _, err := text(m, "name", loc, MaxName, true); err != nil {
		return err
	}
	mode, _, err := text(m, "mode", loc, 0, true)
	if err != nil {
		return err
	}
	if mode != "read" && mode != "write" {
		return invalid(loc, "mode must be read or write")
	}
	return nil
}

func validateEffect(v any, loc string) error {
	e, err := object(v, loc, EffectKeys)
	if err != nil {
		return err
	}
	if err := digestField(e, "requestDigest", loc, true); err != nil {
		return err
	}
	if _, _, err := text(e, "executor", loc, MaxExecutor, true); err != nil {
		return err
	}
	_, hasOut := e["output"]
	errv, hasErr := e["error"]
	if hasOut == hasErr {
		return invalid(loc, "must carry exactly one of output and error")
	}
	if hasErr {
		if err := failureRecord(errv, loc+".error", false, MaxMessage); err != nil {
			return err
		}
	}
	if err := effectUsage(e, loc); err != nil {
		return err
	}
	if c, ok := e["cached"]; ok && c != true {
		return invalid(loc, "cached may only be true")
	}
	if c, ok := e["retryable"]; ok && c != false {
		return invalid(loc, "retryable may only be false")
	}
	if err := effectWake(e, loc); err != nil {
		return err
	}
	return digestField(e, "configurationDigest", loc, false)
}

func effectUsage(e map[string]any, loc string) error {
	u, ok := e["usage"]
	if !ok {
		return nil
	}
	loc += ".usage"
	m, err := object(u, loc, []string{"model", "tokensIn", "tokensOut"})
	if err != nil {
		return err
	}
	if _, _, err := text(m, "model", loc, MaxModel, false); err != nil {
		return err
	}
	for _, k := range []string{"tokensIn", "tokensOut"} {
		if _, _, err := integer(m, k, loc, false); err != nil {
			return err
		}
	}
	return nil
}

func effectWake(e map[string]any, loc string) error {
	w, ok := e["wake"]
	if !ok {
		return nil
	}
	l, isList := w.([]any)
	if !isList || len(l) > MaxWake {
		return invalid(loc+".wake", "must be an array of at most %d handles", MaxWake)
	}
	em, _ := e["error"].(map[string]any)
	if em == nil || em["code"] != "EFFECT_SUSPENDED" {
		return invalid(loc+".wake", "only a suspended effect may carry wake")
	}
	return nil
}

func validateEvent(v any, seq int, loc string) error {
	e, err := object(v, loc, EventKeys)
	if err != nil {
		return err
	}
	n, _, err := integer(e, "seq", loc, true)
	if err != nil {
		return err
	}
	if n != seq {
		return invalid(loc, "seq %d out of order", n)
	}
	kind, _, err := text(e, "kind", loc, 0, true)
	if err != nil {
		return err
	}
	if !slices.Contains(EventKinds, kind) {
		return invalid(loc, "unknown event kind %q", kind)
	}
	if _, _, err := text(e, "path", loc, MaxPathUnits, false); err != nil {
		return err
	}
	if err := digestField(e, "digest", loc, false); err != nil {
		return err
	}
	if _, _, err := text(e, "outcome", loc, MaxOutcomeLen, false); err != nil {
		return err
	}
	return nil
}

// structuralBounds enforces the whole-receipt bounds: at most MaxNodes
// JSON nodes, nesting depth at most MaxDepth (the receipt object is depth
// 0) and at most MaxBytes canonical bytes. The canonical size is only
// computed when a cheap upper bound (every string byte escaped to six
// bytes) could exceed it.
func structuralBounds(r map[string]any) error {
	type item struct {
		v     any
		depth int
	}
	// Room for a typical receipt's deepest backlog, so the walk rarely grows it.
	pending := make([]item, 1, 128)
	pending[0] = item{r, 0}
	nodes, bound := 0, 0
	for len(pending) > 0 {
		it := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		nodes++
		if nodes > MaxNodes || it.depth > MaxDepth {
			return invalid("", "structural bounds exceeded")
		}
		bound += 2 // brackets, quotes or a separator
		switch x := it.v.(type) {
		case map[string]any:
			if len(x)+len(pending) > MaxNodes {
				return invalid("", "node bound exceeded")
			}
			for k, e := range x {
				bound += 6*len(k) + 3
				pending = append(pending, item{e, it.depth + 1})
			}
		case []any:
			if len(x)+len(pending) > MaxNodes {
				return invalid("", "node bound exceeded")
			}
			for _, e := range x {
				pending = append(pending, item{e, it.depth + 1})
			}
		case string:
			bound += 6 * len(x)
		default:
			bound += 24 // the longest JS number text
		}
	}
	if bound > MaxBytes {
		b, err := canon.Encode(r)
		if err != nil {
			return invalid("", "not canonical JSON: %v", err)
		}
		if len(b) > MaxBytes {
			return invalid("", "exceeds %d canonical bytes", MaxBytes)
		}
	}
	return nil
}

// Check validates r and confirms its recorded digest is its intrinsic
// digest.
func Check(v any) error {
	if err := Validate(v); err != nil {
		return err
	}
	r := v.(map[string]any)
	d, err := Digest(r)
	if err != nil {
		return invalid("", "%v", err)
	}
	if d != r["digest"] {
		return &fault.Error{Code: fault.DigestMismatch, Message: fmt.Sprintf("receipt digest %v does not match its content (%s)", r["digest"], d)}
	}
	return nil
}

// Parse reads receipt bytes strictly and validates them.
func Parse(data []byte) (map[string]any, error) {
	v, err := canon.Parse(data, MaxBytes)
	if err != nil {
		return nil, err
	}
	if err := Validate(v); err != nil {
		return nil, err
	}
	return v.(map[string]any), nil
}

// pathString renders a value path for mismatch messages.
func pathString(parts []string) string { return strings.Join(parts, ".") }
