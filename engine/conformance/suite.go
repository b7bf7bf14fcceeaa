// Package conformance runs a directory of upstream examples as upstream's
// `algal suite` does: every top-level *.algal.json is admitted, run with
// its scripted responses and args, verified offline and, where a cache
// marker asks for it, run a second time through the memo index.
package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/store"
)

// Bounds of upstream's suite.
const (
	MaxExamples  = 256
	maxFileBytes = 1 << 20
	maxTransport = 16
)

// Example is one top-level example and its sidecars.
type Example struct {
	ID         string
	Manifest   *manifest.Manifest
	Responses  map[string]any
	Args       map[string]any
	Transports map[string]string
	// Cache is set by <id>.cache.json: a second, memoized run must hit.
	Cache bool
}

func suiteErr(format string, a ...any) error {
	return fault.New(fault.Parse, format, a...)
}

// Load reads the top level of dir: every *.algal.json, sorted by name,
// with its sidecars.
func Load(dir string) ([]Example, error) {
	names, err := exampleFiles(dir)
	if err != nil {
		return nil, err
	}
	out := make([]Example, 0, len(names))
	for _, n := range names {
		ex, err := loadExample(dir, strings.TrimSuffix(n, ".algal.json"))
		if err != nil {
			return nil, err
		}
		out = append(out, ex)
	}
	return out, nil
}

// exampleFiles lists the *.algal.json files at the top of dir, sorted,
// within the suite's bound.
func exampleFiles(dir string) ([]string, error) {
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
	if len(names) > MaxExamples {
		return nil, &fault.Error{Code: fault.BudgetExhausted, Message: fmt.Sprintf("suite: %d examples in %s, more than %d", len(names), dir, MaxExamples)}
	}
	return names, nil
}

// loadExample reads <id>.algal.json and its sidecars.
func loadExample(dir, id string) (Example, error) {
	m, err := manifest.ReadFile(filepath.Join(dir, id+".algal.json"))
	if err != nil {
		return Example{}, err
	}
	ex := Example{ID: id, Manifest: m}
	if ex.Responses, err = sidecarObject(dir, id, "responses"); err != nil {
		return Example{}, err
	}
	if ex.Args, err = sidecarObject(dir, id, "args"); err != nil {
		return Example{}, err
	}
	if ex.Transports, err = transports(dir, id); err != nil {
		return Example{}, err
	}
	if _, err := os.Stat(filepath.Join(dir, id+".cache.json")); err == nil {
		ex.Cache = true
	}
	return ex, nil
}

// sidecarObject reads <id>.<kind>.json, {} when absent.
func sidecarObject(dir, id, kind string) (map[string]any, error) {
	p := filepath.Join(dir, id+"."+kind+".json")
	if _, err := os.Stat(p); os.IsNotExist(err) {
		return map[string]any{}, nil
	}
	v, err := canon.ReadFile(p, maxFileBytes)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, suiteErr("suite `%s`: %s must be an object", id, kind)
	}
	return obj, nil
}

// transports reads <id>.transports.json (name -> directory, relative to
// the examples directory's parent, as upstream resolves it). Without one,
// the examples' own bundles/ directory serves "bundles".
func transports(dir, id string) (map[string]string, error) {
	p := filepath.Join(dir, id+".transports.json")
	if _, err := os.Stat(p); os.IsNotExist(err) {
		return bundlesDir(dir), nil
	}
	raw, err := sidecarObject(dir, id, "transports")
	if err != nil {
		return nil, err
	}
	if len(raw) > maxTransport {
		return nil, &fault.Error{Code: fault.BudgetExhausted, Message: fmt.Sprintf("suite `%s`: more than %d transports", id, maxTransport)}
	}
	out := map[string]string{}
	for name, v := range raw {
		s, err := transportDir(dir, id, name, v)
		if err != nil {
			return nil, err
		}
		out[name] = s
	}
	return out, nil
}

// bundlesDir is the default transport: the examples' bundles/ directory,
// when there is one.
func bundlesDir(dir string) map[string]string {
	b := filepath.Join(dir, "bundles")
	if st, err := os.Stat(b); err == nil && st.IsDir() {
		return map[string]string{"bundles": b}
	}
	return nil
}

// transportDir resolves one transport entry to a local directory.
func transportDir(dir, id, name string, v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", suiteErr("suite `%s`: transport %q must be a directory path", id, name)
	}
	if strings.Contains(s, "://") {
		return "", &fault.Error{Code: fault.EffectUnbound, Message: "native transports currently require local bundle directories"}
	}
	if !filepath.IsAbs(s) {
		s = filepath.Join(filepath.Dir(filepath.Clean(dir)), s)
	}
	return s, nil
}

// Admit puts every example's manifest into st, so that digest references
// between examples resolve whatever the order they run in.
func Admit(st store.Store, examples []Example) error {
	for _, ex := range examples {
		if _, err := st.Put(store.Manifests, ex.Manifest.Value); err != nil {
			return err
		}
	}
	return nil
}
