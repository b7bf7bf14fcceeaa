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
	"github.com/algal-assay/assay/engine/fault"
	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// MaxResponseBytes bounds a response body.
const MaxResponseBytes = 16 << 20

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
	b := &Backend{id: id, cfg: c, baseURL: base, keyEnv: c.APIKeyEnv, hasKey: key != "", limit: NewLimiter(c.MaxConcurrency, c.RequestsPerMinute)}
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithMaxRetries(c.MaxRetries),
		option.WithRequestTimeout(time.Duration(c.TimeoutMs) * time.Millisecond),
		option.WithHTTPClient(httpClient(c.MaxConcurrency)),
		option.WithMiddleware(boundBody),
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

// httpClient follows no redirects (a redirect could carry the key to
// another host) and keeps one idle connection per request slot, so a busy
// backend reuses its connections instead of dialling for every request.
func httpClient(slots int) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = max(slots, 2)
	t.MaxIdleConns = max(slots, 100)
	return &http.Client{
		Transport:     t,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// boundBody caps a response body at MaxResponseBytes.
func boundBody(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if err == nil && res != nil && res.Body != nil {
		res.Body = &limitedBody{ReadCloser: res.Body, left: MaxResponseBytes}
	}
	return res, err
}

var errTooLarge = errors.New("response body over the bound")

type limitedBody struct {
	io.ReadCloser
	left int64
}

func (l *limitedBody) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, errTooLarge
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
	var tools []Tool
	if b.Tools != nil {
		cell, _ := req["cellId"].(string)
		tools = b.Tools(cell)
	}
	return b.ExecuteWith(ctx, req, tools)
}

// ExecuteWith answers req offering tools, so one backend (one limiter)
// can serve contenders with different manifests.
func (b *Backend) ExecuteWith(ctx context.Context, req effect.Request, tools []Tool) (effect.Response, error) {
	kind, _ := req["kind"].(string)
	switch kind {
	case effect.KindAgent, effect.KindClassifier, effect.KindDecide:
	case effect.KindGate:
		return effect.Response{}, &fault.Error{Code: fault.EffectUnbound, Message: "approval gates require a host approval executor, not an LLM", NotRetryable: true}
	default:
		return effect.Response{}, &fault.Error{Code: fault.EffectUnbound, Message: fmt.Sprintf("the openai backend does not serve %q requests", kind), NotRetryable: true}
	}
	if !b.hasKey && !loopback(b.baseURL) {
		return effect.Response{}, &fault.Error{Code: fault.EffectUnbound, Message: "no API key: set " + b.keyEnv + " (the key is read from the environment, never from a file)", NotRetryable: true}
	}
	r, err := Render(req, tools, b.cfg)
	if err != nil {
		return effect.Response{}, &fault.Error{Code: fault.EffectFailed, Message: "cannot render the request: " + err.Error(), NotRetryable: true}
	}
	release, err := b.limit.Acquire(ctx)
	if err != nil {
		return effect.Response{}, err
	}
	b.calls.Add(1)
	var raw []byte
	err = b.client.Post(ctx, "chat/completions", r.Body, &raw)
	// The slot bounds requests in flight at the server: it is free once
	// the body is read, so the next request leaves while this answer is
	// parsed and the run goes on.
	release()
	if err != nil {
		return effect.Response{}, failure(ctx, err)
	}
	a, err := Parse(raw, r.Functions, b.cfg.Model)
	if err != nil {
		return effect.Response{}, err
	}
	if b.OnAnswer != nil {
		if d, derr := effect.RequestDigest(req); derr == nil {
			b.OnAnswer(d, a)
		}
	}
	return effect.Response{Output: a.Output, Usage: a.Usage}, nil
}

func loopback(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	h := u.Hostname()
	return h == "localhost" || h == "127.0.0.1" || h == "::1"
}

// failure maps an SDK error to a recorded failure. Messages are built here
// from the status alone: SDK errors and server bodies can carry the
// request URL, headers or an echo of the key, and none of that may reach a
// receipt. Retryable follows the SDK's own rule (408, 409, 429, 5xx and
// lost connections are retried, so they may be re-issued); a cancelled or
// timed-out call may have been answered without us seeing it, so it is
// uncertain.
func failure(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &fault.Error{Code: fault.BudgetExhausted, Message: "provider request timed out; external completion may be uncertain", Uncertain: true}
	}
	if errors.Is(err, errTooLarge) {
		return &fault.Error{Code: fault.BudgetExhausted, Message: fmt.Sprintf("provider response is over %d bytes", MaxResponseBytes), Uncertain: true}
	}
	var api *sdk.Error
	if errors.As(err, &api) {
		code := api.StatusCode
		switch {
		case code == http.StatusTooManyRequests:
			return &fault.Error{Code: fault.EffectFailed, Message: "provider returned HTTP 429 (rate limited) after the configured retries"}
		case code == http.StatusRequestTimeout || code == http.StatusConflict || code >= 500:
			return &fault.Error{Code: fault.EffectFailed, Message: fmt.Sprintf("provider returned HTTP %d after the configured retries; error bodies are not recorded", code)}
		case code == http.StatusUnauthorized || code == http.StatusForbidden:
			return &fault.Error{Code: fault.EffectFailed, Message: fmt.Sprintf("provider refused the credentials (HTTP %d)", code), NotRetryable: true}
		default:
			return &fault.Error{Code: fault.EffectFailed, Message: fmt.Sprintf("provider rejected the request (HTTP %d); error bodies are not recorded", code), NotRetryable: true}
		}
	}
	return &fault.Error{Code: fault.EffectFailed, Message: "provider request failed: no response (connection refused, reset or redirected)"}
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
