package conformance

import (
	"fmt"
	"strings"

	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
)

// Run admits the examples into st, then runs and verifies each in order.
// The report is upstream's {"suite":"examples","ok","results":[{example,
// outcome,verifyOk,receiptDigest[,cacheHits,cacheOk]}]}; ok holds when
// every example completed, verified and (with a cache marker) hit its memo.
func Run(st store.Store, examples []Example) (map[string]any, error) {
	if err := Admit(st, examples); err != nil {
		return nil, err
	}
	ok := true
	results := make([]any, 0, len(examples))
	for _, ex := range examples {
		r, exOK, err := RunExample(st, ex)
		if err != nil {
			return nil, fmt.Errorf("suite %s: %w", ex.ID, err)
		}
		ok = ok && exOK
		results = append(results, r)
	}
	return map[string]any{"suite": "examples", "ok": ok, "results": results}, nil
}

// RunExample runs, verifies and (with a cache marker) re-runs one example:
// its result record and whether it passed.
func RunExample(st store.Store, ex Example) (map[string]any, bool, error) {
	scripted, err := effect.NewScripted("scripted", ex.Responses)
	if err != nil {
		return nil, false, err
	}
	rec, verified, err := runVerified(st, ex, scripted)
	if err != nil {
		return nil, false, err
	}
	r := map[string]any{"example": ex.ID, "outcome": rec["outcome"], "verifyOk": verified, "receiptDigest": rec["digest"]}
	ok := rec["outcome"] == "complete" && verified
	if !ex.Cache {
		return r, ok, nil
	}
	hits, cacheOK, err := runMemoized(st, ex, rec, scripted.Describe().CacheIdentity)
	if err != nil {
		return nil, false, err
	}
	r["cacheHits"] = float64(hits)
	r["cacheOk"] = cacheOK
	return r, ok && cacheOK, nil
}

// runVerified runs the example once with exec, verifies the receipt
// offline with no executor and stores it.
func runVerified(st store.Store, ex Example, exec effect.Executor) (map[string]any, bool, error) {
	host := &vm.Host{Store: st, Router: effect.NewRouter(exec), Transports: ex.Transports}
	rec, err := vm.Run(ex.Manifest, ex.Args, host)
	if err != nil {
		return nil, false, err
	}
	rep, err := vm.Verify(rec, ex.Manifest, vm.VerifyOptions{Store: st})
	if err != nil {
		return nil, false, err
	}
	if _, err := st.Put(store.Runs, rec); err != nil {
		return nil, false, err
	}
	return rec, rep.OK, nil
}

// runMemoized seeds the memo index with the first receipt's outputs and
// runs the example again through it: the memo hits, and whether the second
// run completed, verified and hit at least once.
func runMemoized(st store.Store, ex Example, first map[string]any, identity string) (int, bool, error) {
	// The memo is keyed under the scripted table's own identity, so a
	// different script can never be served these answers.
	if err := seedMemo(st, first, identity); err != nil {
		return 0, false, err
	}
	again, err := effect.NewScripted("scripted", ex.Responses)
	if err != nil {
		return 0, false, err
	}
	second, verified, err := runVerified(st, ex, effect.NewCached(again, st))
	if err != nil {
		return 0, false, err
	}
	hits := cachedEffects(second)
	return hits, second["outcome"] == "complete" && verified && hits > 0, nil
}

// seedMemo puts every answered effect of rec into the memo index.
func seedMemo(st store.Store, rec map[string]any, identity string) error {
	effects, _ := rec["effects"].([]any)
	for _, e := range effects {
		em, _ := e.(map[string]any)
		out, has := em["output"]
		if !has {
			continue
		}
		entry := map[string]any{"requestDigest": em["requestDigest"], "executor": em["executor"], "output": out}
		if u, ok := em["usage"]; ok {
			entry["usage"] = u
		}
		if _, err := st.PutEffect(entry, identity); err != nil {
			return err
		}
	}
	return nil
}

// cachedEffects counts the effects of rec the memo answered.
func cachedEffects(rec map[string]any) int {
	hits := 0
	effects, _ := rec["effects"].([]any)
	for _, e := range effects {
		if em, _ := e.(map[string]any); em["cached"] == true {
			hits++
		}
	}
	return hits
}

// Readable is the suite report's form for people: a line per example and
// a count.
func Readable(rep map[string]any) string {
	var b strings.Builder
	results := rep["results"].([]any)
	bad := 0
	for _, x := range results {
		r := x.(map[string]any)
		mark := "ok  "
		if r["outcome"] != "complete" || r["verifyOk"] != true || r["cacheOk"] == false {
			mark = "FAIL"
			bad++
		}
		fmt.Fprintf(&b, "%s %-28s %-10v verify=%v", mark, r["example"], r["outcome"], r["verifyOk"])
		if h, ok := r["cacheHits"]; ok {
			fmt.Fprintf(&b, " memo hits=%v", h)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%d of %d examples complete and verified\n", len(results)-bad, len(results))
	return b.String()
}
