package bundle

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// Transport deadline bounds: the whole request, body included.
const (
	DefaultTimeout = 15 * time.Second
	MinTimeoutMs   = 1
	MaxTimeoutMs   = 600_000
)

// Source serves bundle bytes by root digest. A Source reports an absent
// bundle as STORE_MISS and never returns more than MaxBytes.
type Source interface {
	Fetch(ctx context.Context, digest string) ([]byte, error)
	// String names the source for messages.
	String() string
}

// NewSource builds the source a transport spec names: an http:// or
// https:// base URL, or a local directory. timeout 0 means DefaultTimeout;
// it bounds HTTP requests only (a directory read is bounded by size).
func NewSource(spec string, timeout time.Duration) (Source, error) {
	if spec == "" {
		return nil, errf(fault.Parse, "transport source must be a directory or an http(s) URL")
	}
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	if timeout < time.Duration(MinTimeoutMs)*time.Millisecond || timeout > time.Duration(MaxTimeoutMs)*time.Millisecond {
		return nil, errf(fault.Parse, "transport timeout must be %d..%d ms", MinTimeoutMs, MaxTimeoutMs)
	}
	switch {
	case isHTTP(spec):
		return &HTTP{Base: spec, Timeout: timeout}, nil
	case strings.Contains(spec, "://"):
		return nil, errf(fault.EffectUnbound, "transport %q: only directories and http(s) URLs are supported", spec)
	}
	return Dir(spec), nil
}

// isHTTP reports whether spec is an http:// or https:// URL (the scheme
// in any case).
func isHTTP(spec string) bool {
	lower := strings.ToLower(spec)
	return strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://")
}

// Dir is a directory of <hex>.bundle.json files.
type Dir string

func (d Dir) String() string { return string(d) }

// Fetch implements Source. Only a regular file (or a symlink to one) is
// read, through a non-blocking descriptor, so a FIFO planted under the
// bundle's name can neither block the run nor stream without end.
func (d Dir) Fetch(_ context.Context, digest string) ([]byte, error) {
	hex, ok := canon.DigestHex(digest)
	if !ok {
		return nil, errf(fault.Parse, "bundle root %q is not a sha256 digest", digest)
	}
	path := filepath.Join(string(d), hex+".bundle.json")
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errf(fault.StoreMiss, "transport directory %s has no bundle for %s", d, digest)
		}
		return nil, errf(fault.IOFailed, "bundle %s: %v", path, err)
	}
	data, err := canon.ReadBounded(path, MaxBytes)
	if err != nil {
		var ce *fault.Error
		if errors.As(err, &ce) {
			return nil, &fault.Error{Code: ce.Code, Message: "bundle " + path + ": " + ce.Message}
		}
		return nil, err
	}
	return data, nil
}

// HTTP is an HTTP(S) base URL serving <base>/<hex>.bundle.json.
type HTTP struct {
	Base string
	// Timeout bounds the whole request, body included (0: DefaultTimeout).
	Timeout time.Duration
	// Client defaults to http.DefaultClient.
	Client *http.Client
	// Limit overrides MaxBytes downward (tests); 0 means MaxBytes.
	Limit int
}

func (h *HTTP) String() string { return h.Base }

// Fetch implements Source. The body is read through a counting bound, so
// a server that streams past the limit without a Content-Length is cut
// off at limit+1 bytes; a declared length over the limit is refused before
// any body byte is read. Closing the body on every path cancels the rest.
func (h *HTTP) Fetch(ctx context.Context, digest string) ([]byte, error) {
	hex, ok := canon.DigestHex(digest)
	if !ok {
		return nil, errf(fault.Parse, "bundle root %q is not a sha256 digest", digest)
	}
	ctx, cancel := context.WithTimeout(ctx, h.deadline())
	defer cancel()
	url := strings.TrimRight(h.Base, "/") + "/" + hex + ".bundle.json"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, errf(fault.Parse, "transport URL %s: %v", h.Base, err)
	}
	resp, err := h.client().Do(req)
	if err != nil {
		return nil, h.failure(ctx, err)
	}
	defer resp.Body.Close()
	if err := h.statusError(resp, digest); err != nil {
		return nil, err
	}
	return h.readBody(ctx, resp)
}

// limit is the byte bound of one bundle: MaxBytes, or Limit when lower.
func (h *HTTP) limit() int {
	if h.Limit > 0 && h.Limit < MaxBytes {
		return h.Limit
	}
	return MaxBytes
}

// deadline is the fetch timeout: Timeout, or DefaultTimeout when unset.
func (h *HTTP) deadline() time.Duration {
	if h.Timeout <= 0 {
		return DefaultTimeout
	}
	return h.Timeout
}

func (h *HTTP) client() *http.Client {
	if h.Client == nil {
		return http.DefaultClient
	}
	return h.Client
}

// statusError maps a status other than 200: 404 and 410 are a miss.
func (h *HTTP) statusError(resp *http.Response, digest string) error {
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return errf(fault.StoreMiss, "transport %s has no bundle for %s (HTTP %d)", h.Base, digest, resp.StatusCode)
	case resp.StatusCode != http.StatusOK:
		return errf(fault.IOFailed, "transport %s answered HTTP %d for %s", h.Base, resp.StatusCode, digest)
	}
	return nil
}

// readBody reads the body within the limit: a declared length over it is
// refused before any byte is read, a stream past it is cut at limit+1.
func (h *HTTP) readBody(ctx context.Context, resp *http.Response) ([]byte, error) {
	limit := h.limit()
	if resp.ContentLength > int64(limit) {
		return nil, errf(fault.BudgetExhausted, "transport %s declares %d bytes, over the %d-byte bound", h.Base, resp.ContentLength, limit)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	if err != nil {
		return nil, h.failure(ctx, err)
	}
	if len(data) > limit {
		return nil, errf(fault.BudgetExhausted, "transport %s streamed more than %d bytes", h.Base, limit)
	}
	return data, nil
}

func (h *HTTP) failure(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return errf(fault.BudgetExhausted, "transport %s exceeded its %s deadline", h.Base, h.timeoutText())
	}
	return errf(fault.IOFailed, "transport %s: %v", h.Base, err)
}

func (h *HTTP) timeoutText() string {
	return strconv.FormatInt(h.deadline().Milliseconds(), 10) + " ms"
}

// Fetch asks src for the bundle rooted at digest and admits it: a bundle
// rooted anywhere else is DIGEST_MISMATCH, as is any tampered entry.
func Fetch(ctx context.Context, src Source, digest string) (*Bundle, error) {
	data, err := src.Fetch(ctx, digest)
	if err != nil {
		return nil, err
	}
	b, err := Parse(data)
	if err != nil {
		var ce *fault.Error
		if errors.As(err, &ce) {
			return nil, &fault.Error{Code: ce.Code, Message: "bundle from " + src.String() + ": " + ce.Message}
		}
		return nil, err
	}
	if b.Root != digest {
		return nil, errf(fault.DigestMismatch, "bundle from %s is rooted at %s, not %s", src, b.Root, digest)
	}
	return b, nil
}
