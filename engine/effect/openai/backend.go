package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
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
	limit   *Limiter
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
	b := &Backend{id: id, cfg: c, baseURL: base, keyEnv: c.APIKeyEnv, hasKey: key != "", limit: NewLimiter(c.MaxConcurrency, c.RequestsPerMinute),
		key: key, red: redact.New(key)}
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithMaxRetries(c.MaxRetries),
		option.WithRequestTimeout(time.Duration(c.TimeoutMs) * time.Millisecond),
		option.WithHTTPClient(HTTPClient(c.MaxConcurrency)),
		option.WithMiddleware(BoundBody(live.BodyLimit(c.MaxAnswerBytes))),
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

// HTTPClient follows a redirect only within the origin it started at (a
// redirect elsewhere could carry the key to another host: it fails as
// ErrRedirect) and keeps one idle connection per request slot, so a busy
// backend reuses its connections instead of dialling for every request.
func HTTPClient(slots int) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = max(slots, 2)
	t.MaxIdleConns = max(slots, 100)
	return &http.Client{Transport: t, CheckRedirect: sameOrigin}
}

// ErrRedirect is the error of a redirect to another origin.
var ErrRedirect = errors.New("redirected to another origin: refused")

func sameOrigin(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		return ErrRedirect
	}
	if len(via) >= 3 {
		return ErrRedirect
	}
	return nil
}

// BoundBody caps a response body at limit bytes; a longer one fails
// reading with ErrTooLarge.
func BoundBody(limit int64) func(*http.Request, option.MiddlewareNext) (*http.Response, error) {
	return func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		res, err := next(req)
		if err == nil && res != nil && res.Body != nil {
			res.Body = &limitedBody{ReadCloser: res.Body, left: limit, limit: limit}
		}
		return res, err
	}
}

// ErrTooLarge is the error of a response body over its bound.
var ErrTooLarge = errors.New("response body over the bound")

type limitedBody struct {
	io.ReadCloser
	left, limit int64
}

func (l *limitedBody) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, fmt.Errorf("%w of %d bytes", ErrTooLarge, l.limit)
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.ReadCloser.Read(p)
	l.left -= int64(n)
	return n, err
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
	kind, _ := req["kind"].(string)
	switch kind {
	case effect.KindAgent, effect.KindClassifier, effect.KindDecide:
	case effect.KindGate:
		return effect.Response{}, live.Report{}, &fault.Error{Code: fault.EffectUnbound, Message: "approval gates require a host approval executor, not an LLM", NotRetryable: true}
	default:
		return effect.Response{}, live.Report{}, &fault.Error{Code: fault.EffectUnbound, Message: fmt.Sprintf("the openai backend does not serve %q requests", kind), NotRetryable: true}
	}
	if !b.hasKey && !loopback(b.baseURL) {
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
		err = ErrRedirect // a redirect without a place to go
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

func loopback(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	h := u.Hostname()
	return h == "localhost" || h == "127.0.0.1" || h == "::1"
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
	case errors.Is(err, ErrRedirect):
		f.Kind = live.Redirect
	case errors.Is(err, ErrTooLarge):
		f.Kind, f.Detail = live.TooLarge, fmt.Sprintf("the response body is over %d bytes", live.BodyLimit(b.cfg.MaxAnswerBytes))
	case errors.As(err, &api):
		code := api.StatusCode
		f.Kind, f.Status = live.HTTPStatus, code
		f.Retryable = code == http.StatusRequestTimeout || code == http.StatusConflict || code == http.StatusTooManyRequests || code >= 500
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
		f.Retryable = code == http.StatusRequestTimeout || code == http.StatusConflict || code == http.StatusTooManyRequests || code >= 500
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

// Limiter bounds requests in flight and request starts per minute.
type Limiter struct {
	slots chan struct{}
	mu    sync.Mutex
	every time.Duration
	next  time.Time
}

// NewLimiter admits n requests at once (n <= 0: unbounded) and rpm starts
// per minute (rpm <= 0: unbounded), spaced evenly.
func NewLimiter(n, rpm int) *Limiter {
	l := &Limiter{}
	if n > 0 {
		l.slots = make(chan struct{}, n)
	}
	if rpm > 0 {
		l.every = time.Minute / time.Duration(rpm)
	}
	return l
}

// Acquire waits for a slot and the next start time; release frees the
// slot. A cancelled ctx returns its error and holds nothing.
func (l *Limiter) Acquire(ctx context.Context) (release func(), err error) {
	if l.slots != nil {
		select {
		case l.slots <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	release = func() {
		if l.slots != nil {
			<-l.slots
		}
	}
	if l.every > 0 {
		l.mu.Lock()
		now := time.Now()
		start := l.next
		if start.Before(now) {
			start = now
		}
		l.next = start.Add(l.every)
		l.mu.Unlock()
		if wait := time.Until(start); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				release()
				return nil, ctx.Err()
			}
		}
	}
	return release, nil
}
