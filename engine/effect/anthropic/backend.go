package anthropic

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/effect/live"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/redact"
)

// Backend is the live executor. It is safe for concurrent use; the
// configured bounds on concurrency and rate hold across all callers.
type Backend struct {
	id      string
	cfg     Config
	baseURL string
	hasKey  bool
	key     string
	red     *redact.Redactor
	client  sdk.Client
	limit   *live.Limiter
	calls   atomic.Int64
}

// New builds the backend named id. The key is read from c.APIKeyEnv now
// and kept only inside the SDK client and the redactor; a missing key
// fails each request to a non-loopback server before anything leaves.
func New(id string, c Config, env effect.Env) (*Backend, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	c = c.normalized()
	base := c.BaseURL
	if base == "" {
		if v, ok := env(DefaultBaseURLEnv); ok && v != "" {
			if err := live.CheckBaseURL(v); err != nil {
				return nil, fmt.Errorf("%s: %w", DefaultBaseURLEnv, err)
			}
			base = v
		} else {
			base = DefaultBaseURL
		}
	}
	base = strings.TrimRight(base, "/") + "/"
	key, _ := env(c.APIKeyEnv)
	b := &Backend{id: id, cfg: c, baseURL: base, hasKey: key != "", key: key, red: redact.New(key),
		limit: live.NewLimiter(c.MaxConcurrency, c.RequestsPerMinute)}
	opts := []option.RequestOption{
		// The environment is read through env only (tests pass their own,
		// and ANTHROPIC_AUTH_TOKEN or a profile never sneak in).
		option.WithoutEnvironmentDefaults(),
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

// Redact adds secrets to the values this backend redacts; its own key
// always is.
func (b *Backend) Redact(secrets ...string) {
	b.red = redact.New(append([]string{b.key}, secrets...)...)
}

// ID implements effect.Executor.
func (b *Backend) ID() string { return b.id }

// Calls reports how many requests went to the server.
func (b *Backend) Calls() int64 { return b.calls.Load() }

// Describe implements effect.Executor.
func (b *Backend) Describe() effect.Descriptor { return Descriptor(b.cfg) }

// Descriptor is what a backend of configuration c declares.
func Descriptor(c Config) effect.Descriptor {
	d := c.Digest()
	return effect.Descriptor{Effects: []string{effect.KindAgent, effect.KindClassifier, effect.KindDecide}, ConfigurationDigest: d, CacheIdentity: API + ":" + d}
}

// Execute implements effect.Executor (no cell tools).
func (b *Backend) Execute(ctx context.Context, req effect.Request) (effect.Response, error) {
	resp, _, err := b.ExecuteWith(ctx, req, nil)
	return resp, err
}

// ExecuteReport implements live.Executor (no cell tools).
func (b *Backend) ExecuteReport(ctx context.Context, req effect.Request) (effect.Response, live.Report, error) {
	return b.ExecuteWith(ctx, req, nil)
}

// ExecuteWith answers req offering tools.
func (b *Backend) ExecuteWith(ctx context.Context, req effect.Request, tools []live.Tool) (effect.Response, live.Report, error) {
	if err := live.Serves(req, API); err != nil {
		return effect.Response{}, live.Report{}, err
	}
	if !b.hasKey && !live.Loopback(b.baseURL) {
		return effect.Response{}, live.Report{}, &fault.Error{Code: fault.EffectUnbound, Message: "no API key: set " + b.cfg.APIKeyEnv + " (the key is read from the environment, never from a file)", NotRetryable: true}
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
	err = b.client.Post(ctx, "v1/messages", r.Body, &raw, option.WithResponseInto(&res))
	release()
	if err == nil && res != nil && res.StatusCode >= 300 && res.StatusCode < 400 {
		err = live.ErrRedirect
	}
	if err != nil {
		rep, ferr := b.failure(ctx, err, res)
		return effect.Response{}, rep, ferr
	}
	a, perr := Parse(raw, r.Tools, b.cfg.Model)
	resp, n, err := live.Finish(req, effect.Response{Output: a.Output, Usage: a.Usage}, b.red, b.cfg.MaxAnswerBytes, API)
	rep := live.Report{Redactions: n, CacheRead: a.CacheRead, CacheWrite: a.CacheWrite}
	if perr != nil {
		return effect.Response{Usage: resp.Usage}, rep, perr
	}
	return resp, rep, err
}

// failure maps an SDK error to a recorded failure (live.Failure). The
// SDK's own error text carries the URL and the raw body, so only the
// status and the server's error.message (or the start of a body that is
// not the API's error shape) are read, and redacted.
func (b *Backend) failure(ctx context.Context, err error, res *http.Response) (live.Report, error) {
	if ctx.Err() != nil {
		return live.Report{}, ctx.Err()
	}
	f := live.Failure{Kind: live.NoResponse, Provider: API}
	var api *sdk.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		f.Kind = live.Timeout
	case errors.Is(err, live.ErrRedirect):
		f.Kind = live.Redirect
	case errors.Is(err, live.ErrTooLarge):
		f.Kind, f.Detail = live.TooLarge, fmt.Sprintf("the response body is over %d bytes", live.BodyLimit(b.cfg.MaxAnswerBytes))
	case errors.As(err, &api):
		f.Kind, f.Status, f.Retryable = live.HTTPStatus, api.StatusCode, live.RetryableStatus(api.StatusCode)
		f.ServerMessage = api.Message
		if f.ServerMessage == "" {
			f.ServerMessage = api.RawJSON()
		}
	case res != nil && res.StatusCode >= 400:
		f.Kind, f.Status, f.Retryable = live.HTTPStatus, res.StatusCode, live.RetryableStatus(res.StatusCode)
		if res.Body != nil {
			text, _ := io.ReadAll(io.LimitReader(res.Body, 4*live.MaxServerMessage))
			f.ServerMessage = string(text)
		}
	}
	return live.Report{Status: f.Status}, f.Error(b.red)
}
