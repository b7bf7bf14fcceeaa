package harness

import (
	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/evidence"
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

// CacheTally is a bench system's prompt-cache tokens, summed over its
// cases, and its cost with them priced at their own rates.
type CacheTally struct {
	Read, Write int64
	// Cost is the report's cost with every cache token repriced from the
	// input rate (the contract's formula prices all of tokensIn at it)
	// to its model's cache rate: input·(tokensIn − read − write) +
	// output·tokensOut + cache-read·read + cache-write·write, per million.
	Cost float64
}

// cacheLookup answers the prompt-cache tokens of one live request.
type cacheLookup func(executor, requestDigest string) (read, write int64, ok bool)

// cacheTallies prices the prompt-cache tokens of every system of b whose
// live requests reported any (lookup), reading each case's receipt from
// st; nil when none did.
func cacheTallies(b *bench.Report, rates map[string]CacheRate, st evidence.Store, lookup cacheLookup) (map[string]CacheTally, error) {
	if b == nil {
		return nil, nil
	}
	var out map[string]CacheTally
	for _, s := range b.Systems {
		t := CacheTally{Cost: s.Usage.Cost}
		for _, c := range s.Cases {
			rec, err := st.Receipt(c.ReceiptDigest)
			if err != nil {
				return nil, err
			}
			for _, e := range evidence.Effects(rec) {
				ex, _ := e["executor"].(string)
				d, _ := e["requestDigest"].(string)
				read, write, ok := lookup(ex, d)
				if !ok {
					continue
				}
				t.Read += read
				t.Write += write
				key := ex
				if u, _ := e["usage"].(map[string]any); u != nil {
					if m, ok := u["model"].(string); ok && m != "" {
						key = m
					}
				}
				p, priced := b.Prices[key]
				if !priced {
					continue // the cost is unknown already (bench.Measure)
				}
				r, ok := rates[key]
				if !ok {
					r = CacheRate{Read: p.Input, Write: p.Input}
				}
				t.Cost += (float64(read)*(r.Read-p.Input) + float64(write)*(r.Write-p.Input)) / 1e6
			}
		}
		if t.Read+t.Write == 0 {
			continue
		}
		if out == nil {
			out = map[string]CacheTally{}
		}
		out[s.ID] = t
	}
	return out, nil
}

// priceCache fills Outcome.Cache for a bench run with live backends (a
// single run: a repeated run's table pools repeats and shows the
// contract's cost).
func (r *run) priceCache() error {
	if r.live == nil || r.o.Bench == nil || r.o.Repeats != nil || r.c.Parts != nil {
		return nil
	}
	var err error
	r.o.Cache, err = cacheTallies(r.o.Bench, r.w.CacheRates, r.opts.Store, r.live.cacheTokens)
	return err
}

// cacheTokens is the prompt-cache tokens the server reported for one of
// the run's live requests (answered live or from the archive).
func (l *Recording) cacheTokens(executor, d string) (read, write int64, ok bool) {
	if !l.names[executor] {
		return 0, 0, false
	}
	c, ok := l.log.Cache(executor, d)
	return c.Read, c.Write, ok
}
