package effect

import (
	"context"
	"math"
	"sync"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// MaxScriptedBytes bounds a responses table's canonical size.
const MaxScriptedBytes = 1_048_576

// Scripted serves fixture responses (upstream *.responses.json). For each
// request it looks up, in order, a key equal to the request digest (exact
// pinning, always wins) and then the request's cellId. An array value is a
// FIFO queue consumed one element per request for that cell; the queue
// belongs to this executor and keeps its position across every run that
// shares it (bench: all cases of one system). Any other value is served on
// every call. A missing key or a drained queue is EFFECT_UNBOUND, retryable.
//
// Scripted fixtures serve every kind and act as a wildcard for routes that
// name no admitted executor. Their memo identity binds the whole table, so a
// different script can never serve their answers.
type Scripted struct {
	id       string
	table    map[string]any
	identity string
	pinned   bool // the table has request-digest keys

	mu     sync.Mutex
	queues map[string][]any
	usage  map[string]map[string]any
}

// NewScripted builds a scripted executor named id ("scripted" for
// --responses, the bench executor name otherwise).
func NewScripted(id string, responses map[string]any) (*Scripted, error) {
	if responses == nil {
		responses = map[string]any{}
	}
	b, err := canon.Encode(responses)
	if err != nil {
		return nil, Errorf(fault.Parse, "scripted responses %q: %v", id, err)
	}
	if len(b) > MaxScriptedBytes {
		return nil, Errorf(fault.BudgetExhausted, "scripted responses %q are %d bytes, over the %d-byte bound", id, len(b), MaxScriptedBytes)
	}
	identity, err := canon.Digest(map[string]any{"kind": "scripted", "id": id, "responses": responses})
	if err != nil {
		return nil, Errorf(fault.Parse, "scripted responses %q: %v", id, err)
	}
	table := responses
	var usage map[string]map[string]any
	if u, ok := responses[UsageKey]; ok {
		if usage, err = parseScriptedUsage(id, u); err != nil {
			return nil, err
		}
		table = make(map[string]any, len(responses)-1)
		for k, v := range responses {
			if k != UsageKey {
				table[k] = v
			}
		}
	}
	s := &Scripted{id: id, table: table, identity: identity, queues: map[string][]any{}, usage: usage}
	for k := range table {
		if canon.IsDigest(k) {
			s.pinned = true
			break
		}
	}
	return s, nil
}

// UsageKey is the reserved key of a scripted table that declares the token
// usage its answers report: {"<cell id>": {"model"?, "tokensIn"?,
// "tokensOut"?}}. It is an Assay extension (upstream fixtures report no
// usage); no cell id or request digest can take this name, and the table's
// memo identity covers it.
const UsageKey = "$usage"

func parseScriptedUsage(id string, v any) (map[string]map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, Errorf(fault.Parse, "scripted responses %q: %s must be an object of cell id to usage", id, UsageKey)
	}
	out := make(map[string]map[string]any, len(m))
	for _, cell := range canon.SortedKeys(m) {
		u, ok := m[cell].(map[string]any)
		if !ok {
			return nil, Errorf(fault.Parse, "scripted responses %q: %s[%q] must be an object", id, UsageKey, cell)
		}
		for _, k := range canon.SortedKeys(u) {
			switch k {
			case "model":
				if s, ok := u[k].(string); !ok || s == "" || len(s) > 128 {
					return nil, Errorf(fault.Parse, "scripted responses %q: %s[%q].model must be a string of 1 to 128 bytes", id, UsageKey, cell)
				}
			case "tokensIn", "tokensOut":
				if f, ok := u[k].(float64); !ok || f < 0 || f != math.Trunc(f) || f > 1<<53-1 {
					return nil, Errorf(fault.Parse, "scripted responses %q: %s[%q].%s must be a non-negative integer", id, UsageKey, cell, k)
				}
			default:
				return nil, Errorf(fault.Parse, "scripted responses %q: %s[%q] has unknown key %q", id, UsageKey, cell, k)
			}
		}
		out[cell] = u
	}
	return out, nil
}

// LoadScripted reads a responses file (a JSON object of at most 1 MiB).
func LoadScripted(id, path string) (*Scripted, error) {
	v, err := canon.ReadFile(path, MaxScriptedBytes)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, Errorf(fault.Parse, "%s: responses must be an object", path)
	}
	return NewScripted(id, m)
}

// ID implements Executor.
func (s *Scripted) ID() string { return s.id }

// Queued reports whether some entry is a FIFO queue. Such a table serves
// answers by position, so runs that share it must happen in a fixed order
// for their receipts to be reproducible.
func (s *Scripted) Queued() bool {
	for _, v := range s.table {
		if _, ok := v.([]any); ok {
			return true
		}
	}
	return false
}

// Identity is the memo identity: digest({"kind":"scripted","id","responses"}).
func (s *Scripted) Identity() string { return s.identity }

// Describe implements Executor.
func (s *Scripted) Describe() Descriptor {
	return Descriptor{Effects: AllEffects, Wildcard: true, CacheIdentity: s.identity}
}

// SetUsage attaches a usage record ({"model"?, "tokensIn"?, "tokensOut"?})
// to every response served for cellID. Upstream fixtures carry no usage;
// this lets tests and benches exercise token accounting without changing
// the fixture format.
func (s *Scripted) SetUsage(cellID string, usage map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.usage == nil {
		s.usage = map[string]map[string]any{}
	}
	s.usage[cellID] = usage
}

// Reset rewinds every queue to the start of its fixture.
func (s *Scripted) Reset() {
	s.mu.Lock()
	s.queues = map[string][]any{}
	s.mu.Unlock()
}

// Execute implements Executor.
func (s *Scripted) Execute(_ context.Context, req Request) (Response, error) {
	// Hashing the request is only needed when the table pins digests, or
	// to name the request in a miss.
	var d string
	if s.pinned {
		var err error
		if d, err = RequestDigest(req); err != nil {
			return Response{}, err
		}
		if v, ok := s.table[d]; ok {
			return Response{Output: v, Usage: s.usageFor(cellOf(req))}, nil
		}
	}
	cell, ok := req["cellId"].(string)
	if !ok {
		cell = "undefined"
	}
	miss := func() (Response, error) {
		if d == "" {
			var err error
			if d, err = RequestDigest(req); err != nil {
				return Response{}, err
			}
		}
		return Response{}, Errorf(fault.EffectUnbound, "no scripted response for cell %q (digest %s)", cell, d)
	}
	v, ok := s.table[cell]
	if !ok {
		return miss()
	}
	if list, isQueue := v.([]any); isQueue {
		s.mu.Lock()
		q, started := s.queues[cell]
		if !started {
			q = list
		}
		if len(q) == 0 {
			s.queues[cell] = q
			s.mu.Unlock()
			return miss()
		}
		v, s.queues[cell] = q[0], q[1:]
		s.mu.Unlock()
	}
	return Response{Output: v, Usage: s.usageFor(cell)}, nil
}

func (s *Scripted) usageFor(cell string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.usage[cell]
}
