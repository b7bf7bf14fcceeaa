package effect

import (
	"context"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/store"
)

// Cached puts the store's effect memo index in front of an executor. A hit
// returns the recorded output, usage and executor with Cached set, so the
// new receipt records cached:true. A miss runs the inner executor and, when
// the answer is worth determinizing, memoizes it; the first record stored
// under a key wins. Errors are never memoized: a failure may be transient.
// An inner executor without a cache identity (command, recall, host
// executors) passes straight through.
type Cached struct {
	inner Executor
	store store.Store
	// Accept, when set, must approve an output before it is memoized; the
	// VM passes its output-contract check so only contract-valid answers
	// are determinized.
	Accept func(req Request, output any) bool
}

// NewCached wraps inner with the memo index of s.
func NewCached(inner Executor, s store.Store) *Cached {
	return &Cached{inner: inner, store: s}
}

// ID implements Executor: the wrapped executor's id, so routes still match.
func (c *Cached) ID() string { return c.inner.ID() }

// Describe implements Executor.
func (c *Cached) Describe() Descriptor { return c.inner.Describe() }

// Inner returns the wrapped executor.
func (c *Cached) Inner() Executor { return c.inner }

// Execute implements Executor.
func (c *Cached) Execute(ctx context.Context, req Request) (Response, error) {
	identity := c.inner.Describe().CacheIdentity
	if identity == "" || c.store == nil {
		return c.inner.Execute(ctx, req)
	}
	d, err := RequestDigest(req)
	if err != nil {
		return Response{}, err
	}
	hit, ok, err := c.store.GetEffect(d, identity)
	if err != nil {
		return Response{}, hostFault(err)
	}
	if ok {
		exec, _ := hit["executor"].(string)
		usage, _ := hit["usage"].(map[string]any)
		return Response{Output: hit["output"], Usage: usage, Executor: exec, Cached: true}, nil
	}
	resp, err := c.inner.Execute(ctx, req)
	if err != nil || resp.Cached || !c.memoizable(req, resp.Output) {
		return resp, err
	}
	exec := resp.Executor
	if exec == "" {
		exec = c.inner.ID()
	}
	entry := map[string]any{"requestDigest": d, "executor": exec, "output": resp.Output}
	if resp.Usage != nil {
		entry["usage"] = resp.Usage
	}
	if _, err := c.store.PutEffect(entry, identity); err != nil {
		return Response{}, hostFault(err)
	}
	return resp, nil
}

// memoizable admits complete answers only: not a tool-call envelope (that
// is a request for another turn, not an answer), within the request's
// output budget, and accepted by the output contract when a check is set.
func (c *Cached) memoizable(req Request, output any) bool {
	if m, ok := output.(map[string]any); ok && m["tool"] != nil && m["inputs"] != nil {
		return false
	}
	b, err := canon.Encode(output)
	if err != nil || len(b) > maxOutputBytes(req) {
		return false
	}
	return c.Accept == nil || c.Accept(req, output)
}

// maxOutputBytes is the request's budget.maxOutputBytes, or 262,144.
func maxOutputBytes(req Request) int {
	budget, _ := req["budget"].(map[string]any)
	if f, ok := budget["maxOutputBytes"].(float64); ok && f >= 1 && f <= 16_777_216 {
		return int(f)
	}
	return 262_144
}

func hostFault(err error) *fault.Error {
	e := failureOf(err)
	return &fault.Error{Code: e.Code, Message: e.Message, Host: true}
}

// MemoEntry is the memo index entry for a successful record ({requestDigest,
// executor, output, usage?}); ok is false for a failure, which is never
// memoized. The suite's cache check seeds the index from a first run's
// records with it.
func MemoEntry(rec Record) (entry map[string]any, ok bool) {
	if rec.Err != nil {
		return nil, false
	}
	entry = map[string]any{"requestDigest": rec.RequestDigest, "executor": rec.Executor, "output": rec.Output}
	if rec.Usage != nil {
		entry["usage"] = rec.Usage
	}
	return entry, true
}
