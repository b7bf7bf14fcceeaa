// Package effect is the boundary between a run and the world: effect
// requests (canonical algal.effect.v1 / algal.tool-effect.v1 values built by
// the VM), the executors that answer them, the capability-aware router that
// picks an executor and fails closed, and the effect records that receipts
// keep. An executor sees exactly the canonical request; its answer comes
// back as a Record ready to append to a receipt's effects list.
//
// Executors here: Scripted (upstream *.responses.json fixtures), Replay
// (recorded effects served by request digest, for verify, resume and
// replay:<dir>), Cached (the store's memo index in front of another
// executor), Command (cmd:<command line>), Approvals (a file of gate
// decisions) and the Tools registry (--tools FILE).
package effect

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// Request is an effect request: a canonical JSON object.
type Request = map[string]any

// Effect kinds. Tool is not a kind an algal.effect.v1 request carries; it
// names host tool calls (algal.tool-effect.v1) in capability declarations.
const (
	KindAgent      = "agent"
	KindClassifier = "classifier"
	KindGate       = "gate"
	KindDecide     = "decide"
	KindRecall     = "recall"
	KindTool       = "tool"
)

// Request contracts.
const (
	EffectContract = "algal.effect.v1"
	ToolContract   = "algal.tool-effect.v1"
)

// UnboundExecutor and UnboundMessage are the exact executor id and message
// of the record written when no admitted executor serves a request.
const (
	UnboundExecutor = "unbound"
	UnboundMessage  = "no host-admitted executor for this request"
)

// MaxErrorMessage bounds a recorded error message (bytes).
const MaxErrorMessage = 2048

// Errorf builds an effect failure.
func Errorf(code, format string, a ...any) *fault.Error {
	return &fault.Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

// Response is an executor's answer.
type Response struct {
	// Output is the raw output value (any canonical JSON value, null too).
	Output any
	// Usage is {"model"?, "tokensIn"?, "tokensOut"?} or nil.
	Usage map[string]any
	// Executor overrides the record's executor id (e.g. "vercel:<model>");
	// empty keeps the admitted id.
	Executor string
	// Cached marks an answer served from a prior run's memo record.
	Cached bool
}

// Descriptor is what an executor declares to the router.
type Descriptor struct {
	// Effects lists the kinds the executor is admitted to serve. Nil means
	// undeclared, which admits agent and classifier only: a legacy adapter
	// never silently gains approval, decision or index authority.
	Effects []string
	// Wildcard executors (scripted fixtures) also serve a route that names
	// no admitted executor.
	Wildcard bool
	// NoRetry puts retryable:false on every record (command backends).
	NoRetry bool
	// CacheIdentity scopes memo entries; empty means never memoized.
	CacheIdentity string
	// ConfigurationDigest is recorded on live (non-cached) records; empty
	// omits it (scripted executors).
	ConfigurationDigest string
}

// Capability sets of the built-in executor classes.
var (
	ModelEffects    = []string{KindAgent, KindClassifier}
	DecisionEffects = []string{KindClassifier, KindDecide}
	IndexEffects    = []string{KindRecall}
	AllEffects      = []string{KindAgent, KindClassifier, KindGate, KindDecide, KindRecall}
	GateEffects     = []string{KindGate}
)

// Serves reports whether the descriptor admits kind.
func (d Descriptor) Serves(kind string) bool {
	effects := d.Effects
	if effects == nil {
		effects = ModelEffects
	}
	for _, k := range effects {
		if k == kind {
			return true
		}
	}
	return false
}

// Executor answers effect requests.
type Executor interface {
	// ID is the admitted entry name; route.provider / route.preset match it
	// (also in the forms "provider:<v>" and "preset:<v>").
	ID() string
	Describe() Descriptor
	Execute(ctx context.Context, req Request) (Response, error)
}

// Admitter is implemented by executors with request-aware admission,
// checked before capability routing; such an executor serves exactly the
// requests it admits, whatever their kind or route.
type Admitter interface {
	Serves(req Request) bool
}

// RecordSource is implemented by executors that hold finished records
// (replay): the router hands back the recorded entry verbatim.
type RecordSource interface {
	Admitter
	// Take removes and returns the next record for the request, whose
	// digest the router already computed.
	Take(req Request, digest string) (Record, bool)
}

// Failure is a recorded effect error.
type Failure struct {
	Code    string
	Message string
}

// Record is one entry of a receipt's effects list.
type Record struct {
	RequestDigest string
	Executor      string
	// Output is the result when Err is nil (it may be nil: JSON null).
	Output              any
	Err                 *Failure
	Usage               map[string]any
	Cached              bool
	NotRetryable        bool
	Wake                []any
	ConfigurationDigest string
	// Diagnostic explains an unbound or replay-miss record for humans. It
	// is not part of the record and never enters a receipt.
	Diagnostic string
}

// Value renders the record as its canonical receipt entry.
func (r Record) Value() map[string]any {
	m := map[string]any{"requestDigest": r.RequestDigest, "executor": r.Executor}
	if r.Err != nil {
		m["error"] = map[string]any{"code": r.Err.Code, "message": r.Err.Message}
	} else {
		m["output"] = r.Output
	}
	if r.Usage != nil {
		m["usage"] = r.Usage
	}
	if r.Cached {
		m["cached"] = true
	}
	if r.NotRetryable {
		m["retryable"] = false
	}
	if r.Wake != nil {
		m["wake"] = r.Wake
	}
	if r.ConfigurationDigest != "" {
		m["configurationDigest"] = r.ConfigurationDigest
	}
	return m
}

// AsError returns the recorded failure as an *fault.Error (nil for a success).
func (r Record) AsError() *fault.Error {
	if r.Err == nil {
		return nil
	}
	return &fault.Error{Code: r.Err.Code, Message: r.Err.Message, NotRetryable: r.NotRetryable, Wake: r.Wake}
}

// ParseRecord admits one receipt effects entry (closed key set, exactly one
// of output | error).
func ParseRecord(v any) (Record, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return Record{}, Errorf(fault.Parse, "effect record must be an object")
	}
	var r Record
	r.RequestDigest, _ = m["requestDigest"].(string)
	if !canon.IsDigest(r.RequestDigest) {
		return r.refused("requestDigest must be a sha256 digest token")
	}
	for _, k := range canon.SortedKeys(m) {
		field, known := recordFields[k]
		if !known {
			return r.refused(fmt.Sprintf("unknown field %q", k))
		}
		if msg := field(&r, m[k]); msg != "" {
			return r.refused(msg)
		}
	}
	_, hasOut := m["output"]
	if msg := r.checkShape(hasOut); msg != "" {
		return r.refused(msg)
	}
	return r, nil
}

// refused is ParseRecord's error for the record read so far.
func (r *Record) refused(msg string) (Record, error) {
	return Record{}, Errorf(fault.Parse, "effect record %s: %s", r.RequestDigest, msg)
}

// checkShape checks what holds across fields once every field is read.
func (r *Record) checkShape(hasOutput bool) string {
	switch {
	case r.Executor == "":
		return "executor is required"
	case hasOutput == (r.Err != nil):
		return "exactly one of output and error is required"
	case r.Wake != nil && (r.Err == nil || r.Err.Code != fault.EffectSuspended):
		return "wake evidence requires a suspended effect"
	}
	return ""
}

// recordField reads one key of a receipt effects entry into r and returns
// what is wrong with its value ("" when it is admitted).
type recordField func(r *Record, v any) string

// recordFields is the closed key set of an effects entry with each key's
// reader.
var recordFields = map[string]recordField{
	"requestDigest":       func(*Record, any) string { return "" }, // read first, by ParseRecord
	"executor":            readExecutor,
	"output":              func(r *Record, v any) string { r.Output = v; return "" },
	"error":               readError,
	"usage":               readUsage,
	"cached":              readCached,
	"retryable":           readRetryable,
	"wake":                readWake,
	"configurationDigest": readConfigurationDigest,
}

func readExecutor(r *Record, v any) string {
	s, ok := v.(string)
	if !ok || s == "" || len(s) > 256 {
		return "executor must be a non-empty string of at most 256 bytes"
	}
	r.Executor = s
	return ""
}

func readError(r *Record, v any) string {
	e, ok := v.(map[string]any)
	c, ok1 := e["code"].(string)
	msg, ok2 := e["message"].(string)
	if !ok || !ok1 || !ok2 || len(e) != 2 || c == "" || len(msg) > MaxErrorMessage {
		return fmt.Sprintf("error must be {code, message} with a message of at most %d bytes", MaxErrorMessage)
	}
	r.Err = &Failure{Code: c, Message: msg}
	return ""
}

func readUsage(r *Record, v any) string {
	u, ok := v.(map[string]any)
	if !ok {
		return "usage must be an object"
	}
	for _, k := range canon.SortedKeys(u) {
		if msg := usageField(k, u[k]); msg != "" {
			return msg
		}
	}
	r.Usage = u
	return ""
}

// usageField checks one key of a record's usage object.
func usageField(k string, v any) string {
	switch k {
	case "model":
		if s, ok := v.(string); !ok || len(s) > 128 {
			return "usage.model must be a string of at most 128 bytes"
		}
	case "tokensIn", "tokensOut":
		if f, ok := v.(float64); !ok || f < 0 || f != float64(int64(f)) || f > 1<<53-1 {
			return fmt.Sprintf("usage.%s must be a non-negative integer", k)
		}
	default:
		return fmt.Sprintf("usage has unknown field %q", k)
	}
	return ""
}

func readCached(r *Record, v any) string {
	if v != true {
		return "cached may only be true"
	}
	r.Cached = true
	return ""
}

func readRetryable(r *Record, v any) string {
	if v != false {
		return "retryable may only be false"
	}
	r.NotRetryable = true
	return ""
}

func readWake(r *Record, v any) string {
	w, ok := v.([]any)
	if !ok || len(w) > 16 {
		return "wake must be a list of at most 16 handles"
	}
	r.Wake = w
	return ""
}

func readConfigurationDigest(r *Record, v any) string {
	s, ok := v.(string)
	if !ok || !canon.IsDigest(s) {
		return "configurationDigest must be a digest token"
	}
	r.ConfigurationDigest = s
	return ""
}

// RequestDigest is the binding between a request and its record.
func RequestDigest(req Request) (string, error) {
	d, err := canon.Digest(req)
	if err != nil {
		return "", &fault.Error{Code: fault.Internal, Message: "effect request is not canonical JSON: " + err.Error(), Host: true}
	}
	return d, nil
}

// failureOf turns any executor error into a recorded failure. Errors that
// carry a contract code keep it; anything else is an executor failure.
func failureOf(err error) *fault.Error {
	// An executor's own failure is bare and carries its dispositions
	// (retryable, wake); a located one (a store key, a byte offset) is
	// recorded with its location in the message.
	if e, ok := fault.As(err); ok {
		if e == err && !e.Located() {
			return e
		}
		return &fault.Error{Code: e.Code, Message: err.Error()}
	}
	return &fault.Error{Code: fault.EffectFailed, Message: err.Error()}
}

// boundMessage trims a message to MaxErrorMessage bytes on a rune boundary.
func boundMessage(s string) string {
	if len(s) <= MaxErrorMessage {
		return s
	}
	cut := MaxErrorMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// kindOf returns a request's kind ("" when absent).
func kindOf(req Request) string {
	k, _ := req["kind"].(string)
	return k
}

// cellOf returns a request's cellId ("" when absent).
func cellOf(req Request) string {
	c, _ := req["cellId"].(string)
	return c
}
