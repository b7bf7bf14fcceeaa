package workload

import (
	"gopkg.in/yaml.v3"
)

// Price card keys for prompt-cache tokens. A model's cache-read rate
// prices the prompt tokens its server read from the prompt cache
// (Anthropic's cache_read_input_tokens, OpenAI's cached_tokens); its
// cache-write rate the tokens written to it (Anthropic's
// cache_creation_input_tokens). Either defaults to the model's input rate.
const (
	priceCacheRead  = "cache-read"
	priceCacheWrite = "cache-write"
)

// priceKeys are the keys a model's price may hold.
var priceKeys = []string{"input", "output", priceCacheRead, priceCacheWrite}

// CacheRate is a model's price of prompt-cache tokens, dollars per
// million, resolved (a rate the card leaves out is the input rate).
type CacheRate struct{ Read, Write float64 }

// parsePriceCard reads a bench workload's prices: block strictly (every
// model's keys are priceKeys; a cache rate is a number, at least 0) and
// returns the contract's price card (input and output: the report's
// prices, which upstream closes to those two) and the cache rates of the
// models that declare any.
func parsePriceCard(d *decoder, n *yaml.Node) (map[string]any, map[string]CacheRate, error) {
	prices, err := d.object(n, "prices")
	if err != nil {
		return nil, nil, err
	}
	f, order, err := d.mapping(n, "prices", nil, nil)
	if err != nil {
		return nil, nil, err
	}
	var rates map[string]CacheRate
	for _, model := range order {
		v := f[model].value
		if v == nil || v.Kind != yaml.MappingNode {
			continue // the engine's admission says what a price must be
		}
		path := join("prices", model)
		pf, _, err := d.mapping(v, path, priceKeys, nil)
		if err != nil {
			return nil, nil, err
		}
		_, hasRead := pf[priceCacheRead]
		_, hasWrite := pf[priceCacheWrite]
		if !hasRead && !hasWrite {
			continue
		}
		input := 0.0
		if x, ok := pf["input"]; ok {
			if input, err = d.number(x.value, join(path, "input")); err != nil {
				return nil, nil, err
			}
		}
		r := CacheRate{Read: input, Write: input}
		for _, c := range []struct {
			key  string
			rate *float64
		}{{priceCacheRead, &r.Read}, {priceCacheWrite, &r.Write}} {
			x, ok := pf[c.key]
			if !ok {
				continue
			}
			if *c.rate, err = d.number(x.value, join(path, c.key)); err != nil {
				return nil, nil, err
			}
			if *c.rate < 0 {
				return nil, nil, d.fail(x.value, join(path, c.key), "must be at least 0 (dollars per million tokens)")
			}
		}
		if rates == nil {
			rates = map[string]CacheRate{}
		}
		rates[model] = r
		card, _ := prices[model].(map[string]any)
		delete(card, priceCacheRead)
		delete(card, priceCacheWrite)
	}
	return prices, rates, nil
}
