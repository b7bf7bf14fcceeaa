package live

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Bounds and defaults every live backend's configuration shares.
const (
	DefaultTimeoutMs      = 120_000
	DefaultMaxConcurrency = 4
	DefaultMaxRetries     = 2
	MaxTimeoutMs          = 600_000
	MaxConcurrencyBound   = 256
	MaxRetriesBound       = 10
	MaxOutputTokensBound  = 1 << 20
	MaxHeaders            = 16
)

// Limits are the settings every live backend shares: where its key is,
// how much it may answer, how requests travel and which extra headers
// they carry. Zero values mean "default"; MaxRetries -1 means none.
type Limits struct {
	APIKeyEnv         string
	MaxOutputTokens   int
	TimeoutMs         int
	MaxConcurrency    int
	RequestsPerMinute int
	MaxRetries        int
	Headers           map[string]string
	MaxAnswerBytes    int
}

// Normalized fills in the defaults of the travel settings.
func (l Limits) Normalized() Limits {
	if l.TimeoutMs == 0 {
		l.TimeoutMs = DefaultTimeoutMs
	}
	if l.MaxConcurrency == 0 {
		l.MaxConcurrency = DefaultMaxConcurrency
	}
	if l.MaxRetries == 0 {
		l.MaxRetries = DefaultMaxRetries
	} else if l.MaxRetries < 0 {
		l.MaxRetries = 0
	}
	return l
}

// credentialHeaders would carry a key in a header value.
var credentialHeaders = []string{"Authorization", "api-key", "x-api-key"}

// limitBound is one numeric limit's admitted range (0 means the
// default, so the message names the range a value may be set to).
type limitBound struct {
	key                 string
	value, lo, hi, from int
}

func (b limitBound) check() error {
	if b.value < b.lo || b.value > b.hi {
		return fmt.Errorf("%s %d: must be between %d and %d", b.key, b.value, b.from, b.hi)
	}
	return nil
}

// Validate checks l; the message starts with the key it is about.
func (l Limits) Validate() error {
	if l.APIKeyEnv != "" && !EnvName(l.APIKeyEnv) {
		return fmt.Errorf("api-key-env %q: an environment variable name is 1 to 128 letters, digits or underscores", l.APIKeyEnv)
	}
	for _, b := range []limitBound{
		{"max-output-tokens", l.MaxOutputTokens, 0, MaxOutputTokensBound, 1},
		{"timeout-ms", l.TimeoutMs, 0, MaxTimeoutMs, 1},
		{"max-concurrency", l.MaxConcurrency, 0, MaxConcurrencyBound, 1},
		{"requests-per-minute", l.RequestsPerMinute, 0, 1_000_000, 1},
		{"max-retries", l.MaxRetries, -1, MaxRetriesBound, 0},
	} {
		if err := b.check(); err != nil {
			return err
		}
	}
	if err := checkHeaders(l.Headers); err != nil {
		return err
	}
	return limitBound{"max-answer-bytes", l.MaxAnswerBytes, 0, MaxAnswerBytesBound, 1}.check()
}

// checkHeaders admits extra request headers: at most MaxHeaders, valid
// names, no credential header, single-line values of at most 4096 bytes.
func checkHeaders(headers map[string]string) error {
	if len(headers) > MaxHeaders {
		return fmt.Errorf("headers: at most %d", MaxHeaders)
	}
	for _, k := range slices.Sorted(maps.Keys(headers)) {
		if err := checkHeader(k, headers[k]); err != nil {
			return err
		}
	}
	return nil
}

func checkHeader(k, v string) error {
	if !HeaderName(k) {
		return fmt.Errorf("headers: %q is not an HTTP header name", k)
	}
	for _, c := range credentialHeaders {
		if strings.EqualFold(k, c) {
			return fmt.Errorf("headers: %q would carry a credential; name the variable that holds it in api-key-env instead", k)
		}
	}
	if strings.ContainsAny(v, "\r\n\x00") || len(v) > 4096 {
		return fmt.Errorf("headers: %q has a value with a line break or over 4096 bytes", k)
	}
	return nil
}
