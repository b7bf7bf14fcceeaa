package effect

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/algal-assay/assay/engine/fault"
)

// Router picks the executor for each request and turns its answer into a
// record. Selection fails closed:
//
//  1. Executors with request-aware admission (Admitter, e.g. Replay) are
//     consulted first, in order; a recorded answer is returned verbatim.
//  2. Without route.provider / route.preset, the first executor (in
//     admission order) whose capabilities include the request's kind serves.
//  3. With a route, the executor whose id equals a named value, or
//     "provider:<v>" / "preset:<v>", serves, but only if it admits the kind:
//     a named executor that cannot serve the kind is unbound, never a
//     fallback. When no id matches, the first wildcard executor (scripted
//     fixture) admitting the kind serves.
//  4. Otherwise the request is unbound: a record with executor "unbound",
//     EFFECT_UNBOUND and retryable:false.
//
// A Router is safe for concurrent use if its executors are.
type Router struct {
	executors []Executor
	// Tools serves algal.tool-effect.v1 requests (Router.Tool); nil means no
	// host tools are admitted.
	Tools *Tools
}

// NewRouter admits executors in order; order decides the default executor.
func NewRouter(executors ...Executor) *Router {
	return &Router{executors: executors}
}

// Executors returns the admitted executors in order.
func (r *Router) Executors() []Executor { return r.executors }

// routeNames returns the route values a request names (provider, preset).
func routeNames(req Request) []string {
	route, _ := req["route"].(map[string]any)
	var names []string
	for _, key := range []string{"provider", "preset"} {
		if v, ok := route[key].(string); ok {
			names = append(names, v)
		}
	}
	return names
}

func matchesRoute(id string, names []string) bool {
	for _, w := range names {
		if id == w || id == "provider:"+w || id == "preset:"+w {
			return true
		}
	}
	return false
}

// Select returns the executor capability routing picks for req, or nil when
// the request is unbound. Request-aware executors (Admitter) are not routes
// and are never selected here.
func (r *Router) Select(req Request) Executor {
	kind := kindOf(req)
	var routable []Executor
	for _, ex := range r.executors {
		if _, ok := ex.(Admitter); !ok {
			routable = append(routable, ex)
		}
	}
	names := routeNames(req)
	if len(names) == 0 {
		for _, ex := range routable {
			if ex.Describe().Serves(kind) {
				return ex
			}
		}
		return nil
	}
	for _, ex := range routable {
		if matchesRoute(ex.ID(), names) {
			if ex.Describe().Serves(kind) {
				return ex
			}
			return nil
		}
	}
	for _, ex := range routable {
		if d := ex.Describe(); d.Wildcard && d.Serves(kind) {
			return ex
		}
	}
	return nil
}

// Effect serves one algal.effect.v1 request and returns its record.
// maxEffect (cell budget.maxEffectMs; zero for none) bounds the executor's
// wall time. The error is non-nil only for host faults, which abort the run;
// every effect failure, unbound included, comes back as a record.
func (r *Router) Effect(ctx context.Context, req Request, maxEffect time.Duration) (Record, error) {
	d, err := RequestDigest(req)
	if err != nil {
		return Record{}, err
	}
	return r.EffectDigested(ctx, req, d, maxEffect)
}

// EffectDigested is Effect of a request whose digest the caller has
// already computed: d must be RequestDigest(req). The VM hashes each
// request once, for its event log and its routing alike (hashing it twice
// was 3% of a run's and of a verification's CPU).
func (r *Router) EffectDigested(ctx context.Context, req Request, d string, maxEffect time.Duration) (Record, error) {
	if rec, ok, err := r.admitted(ctx, req, d, maxEffect); ok || err != nil {
		return rec, err
	}
	ex := r.Select(req)
	if ex == nil {
		rec := UnboundRecord(d)
		rec.Diagnostic = r.explain(req)
		return rec, nil
	}
	return execute(ctx, ex, req, d, maxEffect)
}

// admitted consults request-aware executors.
func (r *Router) admitted(ctx context.Context, req Request, d string, maxEffect time.Duration) (Record, bool, error) {
	for _, ex := range r.executors {
		if rs, ok := ex.(RecordSource); ok {
			if rec, ok := rs.Take(req, d); ok {
				return rec, true, nil
			}
			continue
		}
		if a, ok := ex.(Admitter); ok && a.Serves(req) {
			rec, err := execute(ctx, ex, req, d, maxEffect)
			return rec, true, err
		}
	}
	return Record{}, false, nil
}

// Explainer is implemented by executors that can say why they did not serve
// a request (Replay).
type Explainer interface {
	Explain(req Request) string
}

func (r *Router) explain(req Request) string {
	var parts []string
	for _, ex := range r.executors {
		if e, ok := ex.(Explainer); ok {
			if s := e.Explain(req); s != "" {
				parts = append(parts, s)
			}
		}
	}
	if len(parts) == 0 {
		kind := kindOf(req)
		msg := "no admitted executor serves kind \"" + kind + "\""
		if names := routeNames(req); len(names) > 0 {
			msg += " on route " + strings.Join(names, "/")
		}
		return msg + " for cell \"" + cellOf(req) + "\""
	}
	return strings.Join(parts, "; ")
}

// UnboundRecord is the exact record of a request no executor serves.
func UnboundRecord(digest string) Record {
	return Record{
		RequestDigest: digest,
		Executor:      UnboundExecutor,
		NotRetryable:  true,
		Err:           &Failure{Code: fault.EffectUnbound, Message: UnboundMessage},
	}
}

// Execute runs one executor directly (no routing) and returns its record.
func Execute(ctx context.Context, ex Executor, req Request, maxEffect time.Duration) (Record, error) {
	d, err := RequestDigest(req)
	if err != nil {
		return Record{}, err
	}
	return execute(ctx, ex, req, d, maxEffect)
}

func execute(ctx context.Context, ex Executor, req Request, d string, maxEffect time.Duration) (Record, error) {
	if maxEffect > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, maxEffect)
		defer cancel()
	}
	desc := ex.Describe()
	resp, err := ex.Execute(ctx, req)
	if err == nil && ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		// An answer that arrived after the deadline is not admitted.
		err = timeoutError()
	}
	return toRecord(ex.ID(), desc, d, resp, err)
}

func timeoutError() *fault.Error {
	return &fault.Error{Code: fault.BudgetExhausted, Message: "effect exceeded maxEffectMs; external completion may be uncertain", Uncertain: true}
}

func toRecord(id string, desc Descriptor, d string, resp Response, err error) (Record, error) {
	if err != nil {
		var e *fault.Error
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			e = timeoutError()
		case errors.Is(err, context.Canceled):
			e = &fault.Error{Code: fault.EffectFailed, Message: "effect cancelled; external completion may be uncertain", Uncertain: true}
		default:
			e = failureOf(err)
		}
		if e.Host {
			return Record{}, e
		}
		rec := Record{
			RequestDigest: d,
			Executor:      id,
			Err:           &Failure{Code: e.Code, Message: boundMessage(e.Message)},
			// Tokens a failed call spent (an answer that could not be
			// read) are still spent: the executor's usage is kept.
			Usage:               resp.Usage,
			ConfigurationDigest: desc.ConfigurationDigest,
			NotRetryable:        desc.NoRetry || e.NotRetryable || e.Uncertain || e.Code == fault.EffectSuspended,
		}
		if e.Code == fault.EffectSuspended && len(e.Wake) > 0 {
			rec.Wake = e.Wake
		}
		return rec, nil
	}
	if resp.Cached {
		// A memo hit is a fact of the prior record, not of this backend's
		// configuration: no configurationDigest, no retry marker.
		exec := resp.Executor
		if exec == "" {
			exec = id
		}
		return Record{RequestDigest: d, Executor: exec, Output: resp.Output, Usage: resp.Usage, Cached: true}, nil
	}
	rec := Record{
		RequestDigest:       d,
		Executor:            id,
		Output:              resp.Output,
		Usage:               resp.Usage,
		ConfigurationDigest: desc.ConfigurationDigest,
		NotRetryable:        desc.NoRetry,
	}
	if resp.Executor != "" {
		rec.Executor = resp.Executor
	}
	return rec, nil
}
