package harness

import (
	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/harness/workload"
)

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
func cacheTallies(b *bench.Report, rates map[string]workload.CacheRate, st evidence.Store, lookup cacheLookup) (map[string]CacheTally, error) {
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
					r = workload.CacheRate{Read: p.Input, Write: p.Input}
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
