// Package openai is Assay's live model backend: one executor for every
// server that speaks OpenAI's chat-completions API (OpenAI, Azure OpenAI,
// vLLM, Ollama, llama.cpp's server, LM Studio, LiteLLM and gateways).
//
// It is built on the official SDK (github.com/openai/openai-go/v3), which
// owns the HTTP side: base-URL override, bearer authentication, retries
// with exponential backoff that honour Retry-After, and per-attempt
// timeouts. This package owns what the SDK cannot know: how an ALGAL effect
// request becomes chat messages (Render, deterministic and golden-tested),
// how an answer is held to the cell's output contract (Parse), what a
// receipt records about usage, model and failures, and how many requests
// may be in flight or started per minute.
//
// The backend serves agent, classifier and decide requests. It never
// serves gate (approval stays with a human or a policy executor) or recall
// (an index) requests.
package openai

import (
	"fmt"
	"slices"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect/live"
)

// API is the value of a backends entry's api key this package serves.
const API = "openai"

// RenderContract names the rendering rules of Render. It enters the
// configuration digest, so a change to how requests become messages makes
// every recording under the old rules stop answering instead of replaying
// answers to questions that were asked differently.
const RenderContract = "assay.openai-chat.v1"

// Response formats: how the output contract is put to the server.
const (
	FormatJSONSchema = "json_schema" // response_format json_schema (structured outputs)
	FormatJSONObject = "json_object" // response_format json_object, schema in the prompt
	FormatPrompt     = "prompt"      // no response_format, schema in the prompt
)

// Defaults of a backend configuration.
const (
	DefaultAPIKeyEnv      = "OPENAI_API_KEY"
	DefaultBaseURLEnv     = "OPENAI_BASE_URL"
	DefaultBaseURL        = "https://api.openai.com/v1"
	DefaultTimeoutMs      = live.DefaultTimeoutMs
	DefaultMaxConcurrency = live.DefaultMaxConcurrency
	DefaultMaxRetries     = live.DefaultMaxRetries
	MaxTimeoutMs          = live.MaxTimeoutMs
	MaxConcurrencyBound   = live.MaxConcurrencyBound
	MaxRetriesBound       = live.MaxRetriesBound
	MaxOutputTokensBound  = live.MaxOutputTokensBound
	MaxHeaders            = live.MaxHeaders
)

// Config is one backend: what a workload's backends entry declares, or the
// defaults an `openai:<model>` spec gets. Zero values mean "default".
type Config struct {
	// Model is the model the request names (required).
	Model string
	// BaseURL is the endpoint as written in the workload. Empty means
	// OPENAI_BASE_URL, else DefaultBaseURL, resolved when the backend is
	// built and never part of the configuration digest.
	BaseURL string
	// APIKeyEnv names the environment variable holding the key (default
	// OPENAI_API_KEY). The key itself is never held in a Config.
	APIKeyEnv string
	// Temperature is sent as given; nil sends 0.
	Temperature *float64
	// MaxOutputTokens caps the answer; zero derives it from the request's
	// budget.maxOutputBytes (a quarter of the bytes, at least 1, at most
	// 16384).
	MaxOutputTokens int
	// TimeoutMs bounds each attempt (default 120000).
	TimeoutMs int
	// MaxConcurrency bounds requests in flight (default 4).
	MaxConcurrency int
	// RequestsPerMinute bounds request starts; zero means no bound.
	RequestsPerMinute int
	// MaxRetries is the SDK's retry count for 408/409/429/5xx and
	// connection failures (default 2; -1 means none).
	MaxRetries int
	// Headers are extra request headers.
	Headers map[string]string
	// ResponseFormat is json_schema (default), json_object or prompt.
	ResponseFormat string
	// Reasoning, when set, says whether the model reasons (sends
	// max_completion_tokens, no temperature or top_p); nil asks the
	// known-family table (live.Reasoning).
	Reasoning *bool
	// ReasoningEffort is sent as reasoning_effort to a reasoning model
	// (minimal, low, medium or high); empty sends none.
	ReasoningEffort string
	// Seed, TopP and Stop are sent when set (top_p only to a model that
	// does not reason).
	Seed *int64
	TopP *float64
	Stop []string
	// MaxAnswerBytes refuses a larger answer before anything records it
	// (default live.DefaultMaxAnswerBytes, 1 MiB).
	MaxAnswerBytes int
}

// Reasons reports whether c's model reasons: the configured answer, else
// the known-family table.
func (c Config) Reasons() bool {
	if c.Reasoning != nil {
		return *c.Reasoning
	}
	return live.Reasoning(c.Model)
}

// MaxStops bounds the stop sequences (OpenAI accepts up to 4).
const MaxStops = 4

// normalized returns c with defaults filled in.
func (c Config) normalized() Config {
	if c.APIKeyEnv == "" {
		c.APIKeyEnv = DefaultAPIKeyEnv
	}
	l := c.limits().Normalized()
	c.TimeoutMs, c.MaxConcurrency, c.MaxRetries = l.TimeoutMs, l.MaxConcurrency, l.MaxRetries
	if c.ResponseFormat == "" {
		c.ResponseFormat = FormatJSONSchema
	}
	return c
}

func (c Config) limits() live.Limits {
	return live.Limits{APIKeyEnv: c.APIKeyEnv, MaxOutputTokens: c.MaxOutputTokens, TimeoutMs: c.TimeoutMs, MaxConcurrency: c.MaxConcurrency,
		RequestsPerMinute: c.RequestsPerMinute, MaxRetries: c.MaxRetries, Headers: c.Headers, MaxAnswerBytes: c.MaxAnswerBytes}
}

// Validate checks c; the message names the field.
func (c Config) Validate() error {
	if err := CheckModel(c.Model); err != nil {
		return err
	}
	if c.BaseURL != "" {
		if err := CheckBaseURL(c.BaseURL); err != nil {
			return err
		}
	}
	if c.Temperature != nil && (*c.Temperature < 0 || *c.Temperature > 2) {
		return fmt.Errorf("temperature %v: must be between 0 and 2", *c.Temperature)
	}
	if err := c.limits().Validate(); err != nil {
		return err
	}
	switch c.ResponseFormat {
	case "", FormatJSONSchema, FormatJSONObject, FormatPrompt:
	default:
		return fmt.Errorf("response-format %q: want %s, %s or %s", c.ResponseFormat, FormatJSONSchema, FormatJSONObject, FormatPrompt)
	}
	return c.checkReasoning()
}

// checkReasoning holds the sampling settings to what the model accepts:
// a reasoning model takes no temperature or top-p, and only it takes a
// reasoning effort.
func (c Config) checkReasoning() error {
	if err := c.checkReasoningModel(); err != nil {
		return err
	}
	if c.ReasoningEffort != "" && !slices.Contains(live.ReasoningEfforts, c.ReasoningEffort) {
		return fmt.Errorf("reasoning-effort %q: want one of %s", c.ReasoningEffort, strings.Join(live.ReasoningEfforts, ", "))
	}
	if c.TopP != nil && (*c.TopP <= 0 || *c.TopP > 1) {
		return fmt.Errorf("top-p %v: must be above 0 and at most 1", *c.TopP)
	}
	if c.Seed != nil && (*c.Seed > 1<<53-1 || *c.Seed < -(1<<53-1)) {
		return fmt.Errorf("seed %d: must be an integer of at most 2^53-1 in magnitude", *c.Seed)
	}
	return c.checkStops()
}

// checkReasoningModel: a reasoning model takes no temperature (but 1),
// top-p or stop sequences; another takes no reasoning effort.
func (c Config) checkReasoningModel() error {
	if !c.Reasons() {
		if c.ReasoningEffort != "" {
			return fmt.Errorf("reasoning-effort: %s is not a reasoning model (set reasoning: true if it is one)", c.Model)
		}
		return nil
	}
	refused := ""
	switch {
	case c.Temperature != nil && *c.Temperature != 1:
		refused = "temperature: %s is a reasoning model, which accepts no temperature"
	case c.TopP != nil:
		refused = "top-p: %s is a reasoning model, which accepts no top_p"
	case len(c.Stop) > 0:
		refused = "stop: %s is a reasoning model, which accepts no stop sequences"
	default:
		return nil
	}
	return fmt.Errorf(refused+" (leave it out, or set reasoning: false if it is not one)", c.Model)
}

func (c Config) checkStops() error {
	if len(c.Stop) > MaxStops {
		return fmt.Errorf("stop: at most %d sequences", MaxStops)
	}
	for _, s := range c.Stop {
		if s == "" || len(s) > 256 {
			return fmt.Errorf("stop: a sequence is 1 to 256 bytes")
		}
	}
	return nil
}

// CheckModel admits a model identifier (live.CheckModel).
func CheckModel(model string) error { return live.CheckModel(model) }

// CheckBaseURL admits an endpoint (live.CheckBaseURL).
func CheckBaseURL(raw string) error { return live.CheckBaseURL(raw) }

// Value is the configuration as it enters the digest: what decides an
// answer (model, the base URL written in the workload, sampling, output
// cap, response format, header names, the rendering rules), never a
// secret (the key, header values) and never where or how requests travel
// (timeouts, concurrency, rate, retries, a base URL taken from the
// environment), so a recording made against one server replays in CI with
// none.
func (c Config) Value() map[string]any {
	c = c.normalized()
	temp := 0.0
	if c.Temperature != nil {
		temp = *c.Temperature
	}
	names := make([]string, 0, len(c.Headers))
	for k := range c.Headers {
		names = append(names, strings.ToLower(k))
	}
	slices.Sort(names)
	hv := make([]any, len(names))
	for i, n := range names {
		hv[i] = n
	}
	var base any
	if c.BaseURL != "" {
		base = strings.TrimRight(c.BaseURL, "/")
	}
	var maxOut any
	if c.MaxOutputTokens > 0 {
		maxOut = float64(c.MaxOutputTokens)
	}
	v := map[string]any{
		"kind":            API,
		"render":          RenderContract,
		"model":           c.Model,
		"baseUrl":         base,
		"temperature":     temp,
		"maxOutputTokens": maxOut,
		"responseFormat":  c.ResponseFormat,
		"headers":         hv,
	}
	// Settings added since the first recordings enter the value only when
	// they are used, so every configuration without them keeps its digest
	// (and its archive keeps answering).
	if c.Reasons() {
		v["reasoning"] = true
		delete(v, "temperature")
		if c.ReasoningEffort != "" {
			v["reasoningEffort"] = c.ReasoningEffort
		}
	}
	if c.Seed != nil {
		v["seed"] = float64(*c.Seed)
	}
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
		// Value holds only strings, numbers, null and lists of strings.
		panic("openai: configuration value is not canonical: " + err.Error())
	}
	return d
}
