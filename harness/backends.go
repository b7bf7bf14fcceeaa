package harness

import (
	"strings"

	"github.com/algal-assay/assay/engine/effect/openai"
	"gopkg.in/yaml.v3"
)

// Backend is one entry of a workload's backends block: a live model
// server an `openai:<name>` executor spec reaches.
//
//	backends:
//	  small:
//	    api: openai                 # the only api so far
//	    model: gpt-4o-mini          # required
//	    base-url: http://127.0.0.1:11434/v1   # default OPENAI_BASE_URL, else api.openai.com
//	    api-key-env: OPENAI_API_KEY # the variable holding the key (never the key)
//	    temperature: 0
//	    max-output-tokens: 512      # default: the cell's maxOutputBytes / 4
//	    timeout-ms: 120000          # per attempt
//	    max-concurrency: 4          # requests in flight
//	    requests-per-minute: 600    # request starts
//	    max-retries: 2              # 408/409/429/5xx and lost connections
//	    response-format: json_schema   # json_schema | json_object | prompt
//	    headers: { OpenAI-Organization: org-123 }
type Backend struct {
	Name   string
	Config openai.Config
	Pos    Pos
}

var backendKeys = []string{"api", "model", "base-url", "api-key-env", "temperature", "max-output-tokens",
	"timeout-ms", "max-concurrency", "requests-per-minute", "max-retries", "response-format", "headers"}

// parseBackends reads the backends block, checking every key where it
// was written.
func (w *Workload) parseBackends(d *decoder, n *yaml.Node) error {
	f, order, err := d.entries(n, "backends", "needs at least one backend (or leave the block out)")
	if err != nil {
		return err
	}
	for _, name := range order {
		at := join("backends", name)
		if !executorPattern.MatchString(name) {
			return d.fail(f[name].key, at, "backend names are 1 to 64 letters, digits, dots, hyphens or underscores")
		}
		bf, _, err := d.mapping(f[name].value, at, backendKeys, []string{"api", "model"})
		if err != nil {
			return err
		}
		b := Backend{Name: name, Pos: d.pos(f[name].value)}
		api, err := d.str(bf["api"].value, at+".api")
		if err != nil {
			return err
		}
		if api != openai.API {
			return d.fail(bf["api"].value, at+".api", "unknown api %q (want %s: any OpenAI-compatible chat-completions server)", api, openai.API)
		}
		c := &b.Config
		check := func(key string, err error) error {
			if err == nil {
				return nil
			}
			return d.fail(bf[key].value, at+"."+key, "%v", err)
		}
		if c.Model, err = d.nonEmpty(bf["model"].value, at+".model"); err != nil {
			return err
		}
		if err := check("model", openai.CheckModel(c.Model)); err != nil {
			return err
		}
		if x, ok := bf["base-url"]; ok {
			if c.BaseURL, err = d.nonEmpty(x.value, at+".base-url"); err != nil {
				return err
			}
			if err := check("base-url", openai.CheckBaseURL(c.BaseURL)); err != nil {
				return err
			}
		}
		if x, ok := bf["api-key-env"]; ok {
			if c.APIKeyEnv, err = d.nonEmpty(x.value, at+".api-key-env"); err != nil {
				return err
			}
			if strings.HasPrefix(c.APIKeyEnv, "sk-") {
				return d.fail(x.value, at+".api-key-env", "this looks like a key; name the environment variable that holds it (e.g. OPENAI_API_KEY), never the key")
			}
		}
		if x, ok := bf["temperature"]; ok {
			t, err := d.number(x.value, at+".temperature")
			if err != nil {
				return err
			}
			c.Temperature = &t
		}
		ints := []struct {
			key      string
			dst      *int
			min, max int
		}{
			{"max-output-tokens", &c.MaxOutputTokens, 1, openai.MaxOutputTokensBound},
			{"timeout-ms", &c.TimeoutMs, 1, openai.MaxTimeoutMs},
			{"max-concurrency", &c.MaxConcurrency, 1, openai.MaxConcurrencyBound},
			{"requests-per-minute", &c.RequestsPerMinute, 1, 1_000_000},
			{"max-retries", &c.MaxRetries, 0, openai.MaxRetriesBound},
		}
		for _, it := range ints {
			if x, ok := bf[it.key]; ok {
				if *it.dst, err = d.integer(x.value, at+"."+it.key, it.min, it.max); err != nil {
					return err
				}
			}
		}
		if _, ok := bf["max-retries"]; ok && c.MaxRetries == 0 {
			c.MaxRetries = -1 // written 0: no retries (the Config zero value means the default)
		}
		if x, ok := bf["response-format"]; ok {
			if c.ResponseFormat, err = d.str(x.value, at+".response-format"); err != nil {
				return err
			}
		}
		if x, ok := bf["headers"]; ok {
			hf, horder, err := d.mapping(x.value, at+".headers", nil, nil)
			if err != nil {
				return err
			}
			c.Headers = map[string]string{}
			for _, h := range horder {
				if c.Headers[h], err = d.str(hf[h].value, at+".headers."+h); err != nil {
					return err
				}
			}
		}
		if err := c.Validate(); err != nil {
			key := "model"
			for _, k := range backendKeys {
				if strings.HasPrefix(err.Error(), k) {
					key = k
				}
			}
			if _, ok := bf[key]; !ok {
				return d.fail(f[name].value, at, "%v", err)
			}
			return d.fail(bf[key].value, at+"."+key, "%v", err)
		}
		w.Backends = append(w.Backends, b)
	}
	return nil
}

// Backend returns the backend an openai:<name> spec names, if declared.
func (w *Workload) Backend(name string) (Backend, bool) {
	for _, b := range w.Backends {
		if b.Name == name {
			return b, true
		}
	}
	return Backend{}, false
}

// LiveSpec reports whether spec names a live model backend.
func LiveSpec(spec string) bool {
	return strings.HasPrefix(spec, "openai:") && len(spec) > len("openai:")
}

// cachedRateKeys are the spellings of a cached-input price a price card
// might carry.
var cachedRateKeys = []string{"cached-input", "cached_input", "cachedInput", "cached"}

// checkCachedRates refuses a cached-input rate in the price card with the
// reason, where it is written: receipts record no cached prompt tokens
// (upstream's usage record is closed to model, tokensIn and tokensOut),
// so no cost could ever be computed at that rate, and a rate that silently
// does nothing would make every cost a quiet lie.
func checkCachedRates(d *decoder, n *yaml.Node) error {
	f, order, err := d.mapping(n, "prices", nil, nil)
	if err != nil {
		return err
	}
	for _, model := range order {
		if resolve(f[model].value) == nil || resolve(f[model].value).Kind != yaml.MappingNode {
			continue
		}
		pf, _, err := d.mapping(f[model].value, join("prices", model), nil, nil)
		if err != nil {
			return err
		}
		for _, k := range cachedRateKeys {
			if x, ok := pf[k]; ok {
				return d.fail(x.key, join(join("prices", model), k), "cached-input rates are not supported: receipts record no cached prompt tokens (their usage is closed to model, tokensIn and tokensOut, as upstream's), so no cost could be computed at this rate; price cached tokens at the input rate (see docs/live.md)")
			}
		}
	}
	return nil
}
