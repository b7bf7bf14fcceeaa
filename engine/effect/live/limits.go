package live

import (
	"fmt"
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

// Validate checks l; the message starts with the key it is about.
func (l Limits) Validate() error {
	if l.APIKeyEnv != "" && !EnvName(l.APIKeyEnv) {
		return fmt.Errorf("api-key-env %q: an environment variable name is 1 to 128 letters, digits or underscores", l.APIKeyEnv)
	}
	if l.MaxOutputTokens < 0 || l.MaxOutputTokens > MaxOutputTokensBound {
		return fmt.Errorf("max-output-tokens %d: must be between 1 and %d", l.MaxOutputTokens, MaxOutputTokensBound)
	}
	if l.TimeoutMs < 0 || l.TimeoutMs > MaxTimeoutMs {
		return fmt.Errorf("timeout-ms %d: must be between 1 and %d", l.TimeoutMs, MaxTimeoutMs)
	}
	if l.MaxConcurrency < 0 || l.MaxConcurrency > MaxConcurrencyBound {
		return fmt.Errorf("max-concurrency %d: must be between 1 and %d", l.MaxConcurrency, MaxConcurrencyBound)
	}
	if l.RequestsPerMinute < 0 || l.RequestsPerMinute > 1_000_000 {
		return fmt.Errorf("requests-per-minute %d: must be between 1 and 1000000", l.RequestsPerMinute)
	}
	if l.MaxRetries < -1 || l.MaxRetries > MaxRetriesBound {
		return fmt.Errorf("max-retries %d: must be between 0 and %d", l.MaxRetries, MaxRetriesBound)
	}
	if len(l.Headers) > MaxHeaders {
		return fmt.Errorf("headers: at most %d", MaxHeaders)
	}
	for k, v := range l.Headers {
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
	}
	if l.MaxAnswerBytes < 0 || l.MaxAnswerBytes > MaxAnswerBytesBound {
		return fmt.Errorf("max-answer-bytes %d: must be between 1 and %d", l.MaxAnswerBytes, MaxAnswerBytesBound)
	}
	return nil
}
