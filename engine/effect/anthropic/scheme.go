package anthropic

import (
	"context"
	"errors"
	"strings"

	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/effect/live"
	"github.com/algal-assay/assay/engine/manifest"
)

// Scheme is this backend's entry in the executor registry: specs
// anthropic:<backend or model>, configured by a workload's backends entry
// of api anthropic, recorded and replayed by the harness through
// effect.Live exactly as openai: is.
var Scheme = effect.Scheme{
	Name: API,
	Arg:  "<model>",
	Uses: effect.InConfig | effect.InFlag | effect.InWorkload,
	Live: &effect.Live{
		Serves: "Anthropic's Messages API",
		Settings: []effect.Setting{
			{Key: "model", Kind: effect.Text, Required: true, Check: func(v any) error { return live.CheckModel(v.(string)) }},
			{Key: "base-url", Kind: effect.Text, Check: func(v any) error { return live.CheckBaseURL(v.(string)) }},
			{Key: "api-key-env", Kind: effect.Text, Check: func(v any) error {
				if strings.HasPrefix(v.(string), "sk-") {
					return errors.New("this looks like a key; name the environment variable that holds it (e.g. ANTHROPIC_API_KEY), never the key")
				}
				return nil
			}},
			{Key: "temperature", Kind: effect.Number},
			{Key: "top-p", Kind: effect.Number},
			{Key: "stop", Kind: effect.Texts},
			{Key: "max-output-tokens", Kind: effect.Integer, Min: 1, Max: live.MaxOutputTokensBound},
			{Key: "timeout-ms", Kind: effect.Integer, Min: 1, Max: live.MaxTimeoutMs},
			{Key: "max-concurrency", Kind: effect.Integer, Min: 1, Max: live.MaxConcurrencyBound},
			{Key: "requests-per-minute", Kind: effect.Integer, Min: 1, Max: 1_000_000},
			{Key: "max-retries", Kind: effect.Integer, Min: 0, Max: live.MaxRetriesBound},
			{Key: "headers", Kind: effect.Headers},
			{Key: "max-answer-bytes", Kind: effect.Integer, Min: 1, Max: live.MaxAnswerBytesBound},
		},
		Configure: configure,
		Default:   func(model string) effect.LiveConfig { return Config{Model: model} },
		Dial: func(id string, c effect.LiveConfig, env effect.Env) (effect.LiveClient, error) {
			return New(id, c.(Config), env)
		},
	},
}

func configure(v map[string]any) (effect.LiveConfig, error) {
	str := func(k string) string { s, _ := v[k].(string); return s }
	num := func(k string) int { n, _ := v[k].(int); return n }
	c := Config{Model: str("model"), BaseURL: str("base-url"), APIKeyEnv: str("api-key-env"),
		MaxOutputTokens: num("max-output-tokens"), TimeoutMs: num("timeout-ms"), MaxConcurrency: num("max-concurrency"),
		RequestsPerMinute: num("requests-per-minute"), MaxRetries: num("max-retries"), MaxAnswerBytes: num("max-answer-bytes")}
	if t, ok := v["temperature"].(float64); ok {
		c.Temperature = &t
	}
	if p, ok := v["top-p"].(float64); ok {
		c.TopP = &p
	}
	c.Stop, _ = v["stop"].([]string)
	if _, ok := v["max-retries"]; ok && c.MaxRetries == 0 {
		c.MaxRetries = -1 // written 0: no retries
	}
	if h, ok := v["headers"].(map[string]string); ok {
		c.Headers = h
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// Descriptor implements effect.LiveConfig.
func (c Config) Descriptor() effect.Descriptor { return Descriptor(c) }

// Concurrency implements effect.LiveConfig.
func (c Config) Concurrency() int { return c.normalized().MaxConcurrency }

// KeyEnv names the variable holding the key.
func (c Config) KeyEnv() string { return c.normalized().APIKeyEnv }

// Serve implements effect.LiveClient: b answering m's requests with the
// tools m's cells list.
func (b *Backend) Serve(m *manifest.Manifest, sigs map[string]manifest.Signature) effect.Executor {
	s := &served{b: b}
	if m != nil {
		s.tools = live.ToolsOf(m, sigs)
	}
	return s
}

type served struct {
	b     *Backend
	tools func(string) []live.Tool
}

func (s *served) ID() string                  { return s.b.ID() }
func (s *served) Describe() effect.Descriptor { return s.b.Describe() }
func (s *served) Execute(ctx context.Context, req effect.Request) (effect.Response, error) {
	resp, _, err := s.ExecuteReport(ctx, req)
	return resp, err
}

// ExecuteReport implements live.Executor.
func (s *served) ExecuteReport(ctx context.Context, req effect.Request) (effect.Response, live.Report, error) {
	var tools []live.Tool
	if s.tools != nil {
		cell, _ := req["cellId"].(string)
		tools = s.tools(cell)
	}
	return s.b.ExecuteWith(ctx, req, tools)
}
