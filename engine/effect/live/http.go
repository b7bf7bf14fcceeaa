package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/fault"
)

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

// BoundBody is an SDK middleware (openai-go's and anthropic-sdk-go's
// option.Middleware alike) capping a response body at limit bytes; a
// longer one fails reading with ErrTooLarge.
func BoundBody(limit int64) func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
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

// Loopback reports whether base is on this machine (a keyless local
// server is called without a key).
func Loopback(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	h := u.Hostname()
	return h == "localhost" || h == "127.0.0.1" || h == "::1"
}

// RetryableStatus is the SDKs' rule: 408, 409, 429 and 5xx (529, an
// overloaded Anthropic, included) are retried.
func RetryableStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusConflict || code == http.StatusTooManyRequests || code >= 500
}

// Serves refuses a request kind no live model backend serves: a gate
// (approval stays with a person or a policy) or a recall (an index).
func Serves(req effect.Request, api string) error {
	kind, _ := req["kind"].(string)
	switch kind {
	case effect.KindAgent, effect.KindClassifier, effect.KindDecide:
		return nil
	case effect.KindGate:
		return &fault.Error{Code: fault.EffectUnbound, Message: "approval gates require a host approval executor, not an LLM", NotRetryable: true}
	}
	return &fault.Error{Code: fault.EffectUnbound, Message: fmt.Sprintf("the %s backend does not serve %q requests", api, kind), NotRetryable: true}
}

// Count admits a token count: a non-negative integer a double holds
// exactly.
func Count(v any) (int64, bool) {
	f, ok := v.(float64)
	if !ok || f < 0 || f > 1<<53-1 || f != float64(int64(f)) {
		return 0, false
	}
	return int64(f), true
}

// Truncate cuts s to at most n bytes.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// CheckModel admits a model identifier: 1 to 128 bytes, no control
// characters.
func CheckModel(model string) error {
	if model == "" || len(model) > 128 || strings.IndexFunc(model, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		return fmt.Errorf("model %q: a model identifier is 1 to 128 bytes without control characters", model)
	}
	return nil
}

// CheckBaseURL admits an endpoint: https, or http on a loopback host,
// without credentials, query or fragment (they would end up in logs).
func CheckBaseURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("base-url: %q is not an absolute URL", redactURL(raw))
	}
	loopback := u.Hostname() == "localhost" || u.Hostname() == "127.0.0.1" || u.Hostname() == "::1"
	if !(u.Scheme == "https" || u.Scheme == "http" && loopback) {
		return fmt.Errorf("base-url: %q must be https, or http on localhost/127.0.0.1/::1", redactURL(raw))
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("base-url: must not carry credentials, a query or a fragment")
	}
	return nil
}

// redactURL drops anything after the host, which is where a pasted token
// would sit.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(unparseable)"
	}
	return u.Scheme + "://" + u.Host
}

// EnvName reports whether s is an environment variable name.
func EnvName(s string) bool { return asciiName(s, '_') }

// HeaderName reports whether s is an HTTP header name.
func HeaderName(s string) bool { return asciiName(s, '-') }

// asciiName reports whether s is 1 to 128 ASCII letters, digits and sep
// ('_' in an environment variable name, '-' in a header name).
func asciiName(s string, sep rune) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, r := range s {
		if !(r == sep || r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z') {
			return false
		}
	}
	return true
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
