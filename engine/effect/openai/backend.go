package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/effect/live"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/redact"
	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// Backend is the live executor. It is safe for concurrent use; the
// configured bounds on concurrency and rate hold across all callers.
type Backend struct {
	id      string
	cfg     Config
	baseURL string
	keyEnv  string
	hasKey  bool
	client  sdk.Client
	limit   *live.Limiter
	// key is the configured key, kept to build the redactor.
	key string
	red *redact.Redactor
	// Tools returns the tools a cell may call (nil: none).
	Tools func(cellID string) []Tool
	// OnAnswer, when set, sees every parsed answer with its request
	// digest (the archive keeps cached prompt tokens this way).
	OnAnswer func(requestDigest string, a Answer)
	calls    atomic.Int64
}

// Env reads the process environment; tests pass their own.
type Env = effect.Env

// New builds the backend named id (the executor id receipts record). The
// key is read from c.APIKeyEnv now and kept only inside the SDK client. A
// missing key is not an error here: requests to a loopback server go
// without one, and any other request fails EFFECT_UNBOUND naming the
// variable, before anything leaves the machine.
func New(id string, c Config, env Env) (*Backend, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	c = c.normalized()
	base := c.BaseURL
	if base == "" {
		if v, ok := env(DefaultBaseURLEnv); ok && v != "" {
			if err := CheckBaseURL(v); err != nil {
				return nil, fmt.Errorf("%s: %w", DefaultBaseURLEnv, err)
			}
			base = v
		} else {
			base = DefaultBaseURL
		}
	}
	base = strings.TrimRight(base, "/") + "/"
	key, _ := env(c.APIKeyEnv)
	b := &Backend{id: id, cfg: c, baseURL: base, keyEnv: c.APIKeyEnv, hasKey: key != "", limit: live.NewLimiter(c.MaxConcurrency, c.RequestsPerMinute),
		key: key, red: redact.New(key)}
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithMaxRetries(c.MaxRetries),
		option.WithRequestTimeout(time.Duration(c.TimeoutMs) * time.Millisecond),
		option.WithHTTPClient(live.HTTPClient(c.MaxConcurrency)),
		option.WithMiddleware(live.BoundBody(live.BodyLimit(c.MaxAnswerBytes))),
	}
	if key != "" {
		opts = append(opts, option.WithAPIKey(key))
	}
	for k, v := range c.Headers {
		opts = append(opts, option.WithHeader(k, v))
	}
	b.client = sdk.NewClient(opts...)
	return b, nil
}

// Redact adds secrets (other backends' keys, say) to the values this
// backend redacts from answers and errors; its own key always is.
func (b *Backend) Redact(secrets ...string) {
	b.red = redact.New(append([]string{b.key}, secrets...)...)
}

// ID implements effect.Executor.
func (b *Backend) ID() string { return b.id }

// Config returns the normalized configuration.
func (b *Backend) Config() Config { return b.cfg }

// Calls reports how many requests went to the server.
func (b *Backend) Calls() int64 { return b.calls.Load() }

// Describe implements effect.Executor.
func (b *Backend) Describe() effect.Descriptor { return Descriptor(b.cfg) }

// Descriptor is what a backend of configuration c declares to the router;
// a recording archive answering in its place declares the same.
func Descriptor(c Config) effect.Descriptor {
	d := c.Digest()
	// The kinds the backend serves: a fresh slice per descriptor.
	kinds := []string{effect.KindAgent, effect.KindClassifier, effect.KindDecide}
	return effect.Descriptor{Effects: kinds, ConfigurationDigest: d, CacheIdentity: "openai:" + d}
}

// Execute implements effect.Executor with the Tools catalog.
func (b *Backend) Execute(ctx context.Context, req effect.Request) (effect.Response, error) {
	resp, _, err := b.ExecuteReport(ctx, req)
	return resp, err
}

// ExecuteReport implements live.Executor with the Tools catalog.
func (b *Backend) ExecuteReport(ctx context.Context, req effect.Request) (effect.Response, live.Report, error) {
	var tools []Tool
	if b.Tools != nil {
		cell, _ := req["cellId"].(string)
		tools = b.Tools(cell)
	}
	return b.ExecuteWith(ctx, req, tools)
}

// ExecuteWith answers req offering tools, so one backend (one limiter)
// can serve contenders with different manifests.
func (b *Backend) ExecuteWith(ctx context.Context, req effect.Request, tools []Tool) (effect.Response, live.Report, error) {
	if err := live.Serves(req, API); err != nil {
		return effect.Response{}, live.Report{}, err
	}
	if !b.hasKey && !live.Loopback(b.baseURL) {
		return effect.Response{}, live.Report{}, &fault.Error{Code: fault.EffectUnbound, Message: "no API key: set " + b.keyEnv + " (the key is read from the environment, never from a file)", NotRetryable: true}
	}
	r, err := Render(req, tools, b.cfg)
	if err != nil {
		return effect.Response{}, live.Report{}, &fault.Error{Code: fault.EffectFailed, Message: "cannot render the request: " + err.Error(), NotRetryable: true}
	}
	release, err := b.limit.Acquire(ctx)
	if err != nil {
		return effect.Response{}, live.Report{}, err
	}
	b.calls.Add(1)
	var raw []byte
	var res *http.Response
	err = b.client.Post(ctx, "chat/completions", r.Body, &raw, option.WithResponseInto(&res))
	// The slot bounds requests in flight at the server: it is free once
	// the body is read, so the next request leaves while this answer is
	// parsed and the run goes on.
	release()
	if err == nil && res != nil && res.StatusCode >= 300 && res.StatusCode < 400 {
		err = live.ErrRedirect // a redirect without a place to go
	}
	if err != nil {
		rep, ferr := b.failure(ctx, err, res)
		return effect.Response{}, rep, ferr
	}
	a, perr := Parse(raw, r.Functions, b.cfg.Model)
	resp, n, err := live.Finish(req, effect.Response{Output: a.Output, Usage: a.Usage}, b.red, b.cfg.MaxAnswerBytes, "provider")
	rep := live.Report{Redactions: n, Malformed: a.Malformed, CacheRead: a.CachedTokensIn, CacheWrite: -1}
	if perr != nil {
		// An answer that cannot be read keeps the usage it spent.
		return effect.Response{Usage: resp.Usage}, rep, perr
	}
	if err != nil {
		return resp, rep, err
	}
	if b.OnAnswer != nil {
		if d, derr := effect.RequestDigest(req); derr == nil {
			b.OnAnswer(d, a)
		}
	}
	return resp, rep, nil
}

// failure maps an SDK error to a recorded failure (live.Failure): the
// status, the server's own error message with every secret redacted, and
// whether it was retried. Retryable follows the SDK's own rule (408, 409,
// 429, 5xx and lost connections are retried, so they may be re-issued); a
// cancelled or timed-out call may have been answered without us seeing
// it, so it is uncertain. Nothing else of an SDK error (the request URL,
// headers, the raw body) is kept.
func (b *Backend) failure(ctx context.Context, err error, res *http.Response) (live.Report, error) {
	if ctx.Err() != nil {
		return live.Report{}, ctx.Err()
	}
	f := live.Failure{Kind: live.NoResponse}
	var api *sdk.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		f.Kind = live.Timeout
	case errors.Is(err, live.ErrRedirect):
		f.Kind = live.Redirect
	case errors.Is(err, live.ErrTooLarge):
		f.Kind, f.Detail = live.TooLarge, fmt.Sprintf("the response body is over %d bytes", live.BodyLimit(b.cfg.MaxAnswerBytes))
	case errors.As(err, &api):
		code := api.StatusCode
		f.Kind, f.Status = live.HTTPStatus, code
		f.Retryable = live.RetryableStatus(code)
		f.ServerMessage = api.Message
		if f.ServerMessage == "" && res != nil && res.Body != nil {
			f.ServerMessage = bodyText(res)
		}
	case res != nil && res.StatusCode >= 400:
		// An error body that is not {"error": {...}} (a gateway's plain
		// text or HTML page): the SDK gives no API error, but the status
		// and the text are still the server's.
		code := res.StatusCode
		f.Kind, f.Status = live.HTTPStatus, code
		f.Retryable = live.RetryableStatus(code)
		if res.Body != nil {
			f.ServerMessage = bodyText(res)
		}
	}
	return live.Report{Status: f.Status}, f.Error(b.red)
}

// bodyText is the start of an error body that is not OpenAI's
// {"error": {...}} (a gateway's plain text or HTML page).
func bodyText(res *http.Response) string {
	text, _ := io.ReadAll(io.LimitReader(res.Body, 4*live.MaxServerMessage))
	return string(text)
}
