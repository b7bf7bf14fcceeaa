package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/spf13/cobra"
)

// Bounds of upstream's suite.
const (
	maxSuiteExamples  = 256
	maxSuiteFileBytes = 1 << 20
	maxSuiteTransport = 16
)

// suiteExample is one top-level example and its sidecars.
type suiteExample struct {
	id         string
	m          *manifest.Manifest
	responses  map[string]any
	args       map[string]any
	transports map[string]string
	cache      bool
}

func newSuiteCmd(c *cli) *cobra.Command {
	var examples, modules, dir string
	var write bool
	cmd := &cobra.Command{
		Use:   "suite",
		Short: "Run and verify every example of a directory, as upstream's `algal suite` does",
		Long: "Every top-level *.algal.json of --examples (default examples) is an example, id = the file\n" +
			"name without .algal.json. All are admitted first (so digest references resolve), then each runs\n" +
			"with the scripted executor of <id>.responses.json and the args of <id>.args.json (both {} when\n" +
			"absent), and its receipt is verified offline with no executor. <id>.transports.json maps\n" +
			"transport names to directories relative to the examples directory's parent; without one, a\n" +
			"bundles/ directory inside the examples serves the transport \"bundles\". Where <id>.cache.json\n" +
			"exists, the first receipt's outputs seed the memo index and a second, memoized run must\n" +
			"complete, verify and hit the memo at least once.\n" +
			"Prints {\"suite\":\"examples\",\"ok\",\"results\":[{example,outcome,verifyOk,receiptDigest[,cacheHits,\n" +
			"cacheOk]}]}; exit 1 unless every example is ok. The store (--dir, default .algal) is read through\n" +
			"an overlay and written only with --write.",
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			base, err := store.OpenFileStore(dir)
			if err != nil {
				return err
			}
			var st store.Store = base
			if !write {
				st = store.NewOverlay(base)
			}
			if err := admitModules(st, modules); err != nil {
				return err
			}
			suite, err := loadSuite(examples)
			if err != nil {
				return err
			}
			for _, ex := range suite {
				if _, err := st.Put(store.Manifests, ex.m.Value); err != nil {
					return err
				}
			}
			ok := true
			results := make([]any, 0, len(suite))
			for _, ex := range suite {
				r, err := runSuiteExample(st, ex)
				if err != nil {
					return fmt.Errorf("suite %s: %w", ex.id, err)
				}
				ok = ok && r["ok"] == true
				delete(r, "ok")
				results = append(results, r)
			}
			rep := map[string]any{"suite": "examples", "ok": ok, "results": results}
			if c.readable() {
				if _, err := fmt.Fprint(c.stdout, readableSuite(rep)); err != nil {
					return err
				}
			} else if err := c.emit(rep, ""); err != nil {
				return err
			}
			if !ok {
				return reported(fmt.Errorf("suite: not every example completed and verified"))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&examples, "examples", "examples", "examples `DIR` (only its top level is read)")
	cmd.Flags().StringVar(&modules, "modules", "", "`DIR` of *.algal.json modules to admit first")
	cmd.Flags().StringVar(&dir, "dir", store.DefaultDir, "file store `DIR`")
	cmd.Flags().BoolVar(&write, "write", false, "persist manifests and receipts into --dir")
	return cmd
}

func suiteErr(format string, a ...any) error {
	return fault.New(fault.Parse, format, a...)
}

// loadSuite reads the top level of dir: every *.algal.json, sorted by
// name, with its sidecars.
func loadSuite(dir string) ([]suiteExample, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, &fault.Error{Code: fault.IOFailed, Message: err.Error()}
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".algal.json") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return nil, suiteErr("suite found no examples in %s", dir)
	}
	if len(names) > maxSuiteExamples {
		return nil, &fault.Error{Code: fault.BudgetExhausted, Message: fmt.Sprintf("suite: %d examples in %s, more than %d", len(names), dir, maxSuiteExamples)}
	}
	var out []suiteExample
	for _, n := range names {
		id := strings.TrimSuffix(n, ".algal.json")
		m, err := manifest.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return nil, err
		}
		ex := suiteExample{id: id, m: m}
		if ex.responses, err = sidecarObject(dir, id, "responses"); err != nil {
			return nil, err
		}
		if ex.args, err = sidecarObject(dir, id, "args"); err != nil {
			return nil, err
		}
		if ex.transports, err = suiteTransports(dir, id); err != nil {
			return nil, err
		}
		if _, err := os.Stat(filepath.Join(dir, id+".cache.json")); err == nil {
			ex.cache = true
		}
		out = append(out, ex)
	}
	return out, nil
}

// sidecarObject reads <id>.<kind>.json, {} when absent.
func sidecarObject(dir, id, kind string) (map[string]any, error) {
	p := filepath.Join(dir, id+"."+kind+".json")
	if _, err := os.Stat(p); os.IsNotExist(err) {
		return map[string]any{}, nil
	}
	v, err := canon.ReadFile(p, maxSuiteFileBytes)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, suiteErr("suite `%s`: %s must be an object", id, kind)
	}
	return obj, nil
}

// suiteTransports reads <id>.transports.json (name -> directory, relative
// to the examples directory's parent, as upstream resolves it). Without
// one, the examples' own bundles/ directory serves "bundles".
func suiteTransports(dir, id string) (map[string]string, error) {
	p := filepath.Join(dir, id+".transports.json")
	if _, err := os.Stat(p); os.IsNotExist(err) {
		b := filepath.Join(dir, "bundles")
		if st, err := os.Stat(b); err == nil && st.IsDir() {
			return map[string]string{"bundles": b}, nil
		}
		return nil, nil
	}
	raw, err := sidecarObject(dir, id, "transports")
	if err != nil {
		return nil, err
	}
	if len(raw) > maxSuiteTransport {
		return nil, &fault.Error{Code: fault.BudgetExhausted, Message: fmt.Sprintf("suite `%s`: more than %d transports", id, maxSuiteTransport)}
	}
	out := map[string]string{}
	for name, v := range raw {
		s, ok := v.(string)
		if !ok {
			return nil, suiteErr("suite `%s`: transport %q must be a directory path", id, name)
		}
		if strings.Contains(s, "://") {
			return nil, &fault.Error{Code: fault.EffectUnbound, Message: "native transports currently require local bundle directories"}
		}
		if !filepath.IsAbs(s) {
			s = filepath.Join(filepath.Dir(filepath.Clean(dir)), s)
		}
		out[name] = s
	}
	return out, nil
}

// runSuiteExample runs, verifies and (with a cache marker) re-runs one
// example; the record carries "ok" for the caller to strip.
func runSuiteExample(st store.Store, ex suiteExample) (map[string]any, error) {
	scripted, err := effect.NewScripted("scripted", ex.responses)
	if err != nil {
		return nil, err
	}
	runOnce := func(exec effect.Executor) (map[string]any, bool, error) {
		host := &vm.Host{Store: st, Router: effect.NewRouter(exec), Transports: ex.transports}
		rec, err := vm.Run(ex.m, ex.args, host)
		if err != nil {
			return nil, false, err
		}
		rep, err := vm.Verify(rec, ex.m, vm.VerifyOptions{Store: st})
		if err != nil {
			return nil, false, err
		}
		if _, err := st.Put(store.Runs, rec); err != nil {
			return nil, false, err
		}
		return rec, rep.OK, nil
	}
	rec, verified, err := runOnce(scripted)
	if err != nil {
		return nil, err
	}
	r := map[string]any{"example": ex.id, "outcome": rec["outcome"], "verifyOk": verified, "receiptDigest": rec["digest"]}
	ok := rec["outcome"] == "complete" && verified
	if ex.cache {
		// The memo is keyed under the scripted table's own identity, so a
		// different script can never be served these answers.
		identity := scripted.Describe().CacheIdentity
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
				return nil, err
			}
		}
		again, err := effect.NewScripted("scripted", ex.responses)
		if err != nil {
			return nil, err
		}
		cached := effect.NewCached(again, st)
		second, verified2, err := runOnce(cached)
		if err != nil {
			return nil, err
		}
		hits := 0
		effects, _ = second["effects"].([]any)
		for _, e := range effects {
			if em, _ := e.(map[string]any); em["cached"] == true {
				hits++
			}
		}
		cacheOK := second["outcome"] == "complete" && verified2 && hits > 0
		r["cacheHits"] = float64(hits)
		r["cacheOk"] = cacheOK
		ok = ok && cacheOK
	}
	r["ok"] = ok
	return r, nil
}

// readableSuite is suite's form for people.
func readableSuite(rep map[string]any) string {
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
