// Package anthropic is Assay's native backend for Anthropic's Messages
// API: `anthropic:<backend or model>` executor specs.
//
// It is built on the official SDK (github.com/anthropics/anthropic-sdk-go),
// which owns the HTTP side: the x-api-key and anthropic-version headers,
// retries with exponential backoff that honour retry-after on 408, 409,
// 429, 5xx and 529 (overloaded), and per-attempt timeouts. This package
// owns the translation: how an ALGAL effect request becomes one Messages
// request (Render: the same system and user text as every live backend,
// structured output through a forced tool, an agent's tools as tools and
// its tool log as tool_use / tool_result turns), and how an answer is read
// back (Parse). Failures, redaction, the answer bound, concurrency and
// rate follow engine/effect/live, exactly as for openai:.
//
// The backend serves agent, classifier and decide requests; streaming is
// never used (an answer is one JSON body).
package anthropic

import (
	"fmt"
	"slices"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect/live"
)

// API is the value of a backends entry's api key this package serves.
const API = "anthropic"

// RenderContract names the rendering rules of Render; it enters the
// configuration digest.
const RenderContract = "assay.anthropic-messages.v1"

// Defaults of a backend configuration.
const (
	DefaultAPIKeyEnv  = "ANTHROPIC_API_KEY"
	DefaultBaseURLEnv = "ANTHROPIC_BASE_URL"
	DefaultBaseURL    = "https://api.anthropic.com"
	// Version is the anthropic-version header the SDK sends.
	Version = "2023-06-01"
)

// Config is one backend: a workload's backends entry of api anthropic, or
// the defaults an `anthropic:<model>` spec gets. Zero values mean
// "default".
type Config struct {
	Model string
	// BaseURL is the endpoint as written in the workload; empty means
	// ANTHROPIC_BASE_URL, else DefaultBaseURL (never part of the digest).
	BaseURL string
	// APIKeyEnv names the variable holding the key (default
	// ANTHROPIC_API_KEY).
	APIKeyEnv   string
	Temperature *float64
	TopP        *float64
	Stop        []string
	// MaxOutputTokens caps the answer (max_tokens, which the API
	// requires); zero derives it from the request's budget.
	MaxOutputTokens   int
	TimeoutMs         int
	MaxConcurrency    int
	RequestsPerMinute int
	// MaxRetries is the SDK's retry count for 408, 409, 429, 5xx, 529 and
	// lost connections (default 2; -1 means none).
	MaxRetries     int
	Headers        map[string]string
	MaxAnswerBytes int
}

func (c Config) normalized() Config {
	if c.APIKeyEnv == "" {
		c.APIKeyEnv = DefaultAPIKeyEnv
	}
	l := live.Limits{TimeoutMs: c.TimeoutMs, MaxConcurrency: c.MaxConcurrency, MaxRetries: c.MaxRetries}.Normalized()
	c.TimeoutMs, c.MaxConcurrency, c.MaxRetries = l.TimeoutMs, l.MaxConcurrency, l.MaxRetries
	return c
}

// Validate checks c; the message names the field.
func (c Config) Validate() error {
	if err := live.CheckModel(c.Model); err != nil {
		return err
	}
	if c.BaseURL != "" {
		if err := live.CheckBaseURL(c.BaseURL); err != nil {
			return err
		}
	}
	if c.Temperature != nil && (*c.Temperature < 0 || *c.Temperature > 1) {
		return fmt.Errorf("temperature %v: must be between 0 and 1", *c.Temperature)
	}
	if c.TopP != nil && (*c.TopP <= 0 || *c.TopP > 1) {
		return fmt.Errorf("top-p %v: must be above 0 and at most 1", *c.TopP)
	}
	if len(c.Stop) > 8 {
		return fmt.Errorf("stop: at most 8 sequences")
	}
	return live.Limits{APIKeyEnv: c.APIKeyEnv, MaxOutputTokens: c.MaxOutputTokens, TimeoutMs: c.TimeoutMs, MaxConcurrency: c.MaxConcurrency,
		RequestsPerMinute: c.RequestsPerMinute, MaxRetries: c.MaxRetries, Headers: c.Headers, MaxAnswerBytes: c.MaxAnswerBytes}.Validate()
}

// Value is the configuration as it enters the digest: what decides an
// answer, never a secret or how requests travel.
func (c Config) Value() map[string]any {
	c = c.normalized()
	temp := 0.0
	if c.Temperature != nil {
		temp = *c.Temperature
	}
	names := make([]any, 0, len(c.Headers))
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range c.Headers {
			if !yield(strings.ToLower(k)) {
				return
			}
		}
	}) {
		names = append(names, k)
	}
	var base, maxOut any
	if c.BaseURL != "" {
		base = strings.TrimRight(c.BaseURL, "/")
	}
	if c.MaxOutputTokens > 0 {
		maxOut = float64(c.MaxOutputTokens)
	}
	v := map[string]any{"kind": API, "render": RenderContract, "model": c.Model, "baseUrl": base,
		"temperature": temp, "maxOutputTokens": maxOut, "headers": names}
	if c.TopP != nil {
		v["topP"] = *c.TopP
	}
	if len(c.Stop) > 0 {
		v["stop"] = canon.Strings(c.Stop)
	}
	return v
}

// Digest is the configurationDigest live records carry.
func (c Config) Digest() string {
	d, err := canon.Digest(c.Value())
	if err != nil {
		panic("anthropic: configuration value is not canonical: " + err.Error())
	}
	return d
}
