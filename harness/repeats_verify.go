package harness

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/harness/gate"
	"github.com/algal-assay/assay/harness/repeats"
	"github.com/algal-assay/assay/harness/rundir"
	"github.com/algal-assay/assay/harness/workload"
)

// maxDisagreements bounds the fields one comparison names.
const maxDisagreements = 20

// RepeatsDisagreements compares a stored repeats.json (parsed) with the
// aggregate re-derived from the run's verified reports and names every
// field that differs by its path (contenders[cheap].estimates[k=3].passHatK),
// so an edited pass^k or flaky list is named where it was edited.
func RepeatsDisagreements(stored any, derived *repeats.Aggregate) []string {
	var out []string
	diffValue(repeats.File+": ", "", stored, derived.Value(), &out)
	if len(out) > maxDisagreements {
		out = append(out[:maxDisagreements], fmt.Sprintf("%s: %d more field(s) differ", repeats.File, len(out)-maxDisagreements))
	}
	return out
}

func diffValue(prefix, path string, got, want any, out *[]string) {
	if len(*out) > maxDisagreements {
		return
	}
	gm, gok := got.(map[string]any)
	wm, wok := want.(map[string]any)
	if gok && wok {
		keys := canon.SortedKeys(wm)
		for _, k := range canon.SortedKeys(gm) {
			if _, ok := wm[k]; !ok {
				*out = append(*out, fmt.Sprintf("%sunexpected member %s", prefix, memberPath(path, k)))
			}
		}
		for _, k := range keys {
			if _, ok := gm[k]; !ok {
				*out = append(*out, fmt.Sprintf("%s%s is absent, but re-deriving it from the reports gives %s", prefix, memberPath(path, k), gate.ShortJSON(wm[k])))
				continue
			}
			diffValue(prefix, memberPath(path, k), gm[k], wm[k], out)
		}
		return
	}
	gl, gok := got.([]any)
	wl, wok := want.([]any)
	if gok && wok && len(gl) == len(wl) && !scalarList(wl) {
		for i := range wl {
			diffValue(prefix, path+"["+label(wl[i], i)+"]", gl[i], wl[i], out)
		}
		return
	}
	if !sameJSON(got, want) {
		*out = append(*out, fmt.Sprintf("%s%s is %s, but re-deriving it from the reports gives %s", prefix, path, gate.ShortJSON(got), gate.ShortJSON(want)))
	}
}

// scalarList: a list of strings or numbers (a flaky list, passedIn) is
// compared whole, so a forged list is named once.
func scalarList(l []any) bool {
	for _, x := range l {
		switch x.(type) {
		case map[string]any, []any:
			return false
		}
	}
	return true
}

// label names a list element by its id (or k, or repeat) when it has one.
func label(v any, i int) string {
	m, _ := v.(map[string]any)
	if id, ok := m["id"].(string); ok {
		return id
	}
	for _, k := range []string{"k", "repeat"} {
		if n, ok := m[k].(float64); ok {
			return fmt.Sprintf("%s=%s", k, workload.Num(n))
		}
	}
	return fmt.Sprint(i)
}

// StoredRepeats reads how many repeats a run directory says it holds:
// repeats.json's "repeats" (1 when the file is absent). The count is only
// a claim: the workload compiled with it must give the directory's slug.
func StoredRepeats(dir string) (int, any, error) {
	path := filepath.Join(dir, repeats.File)
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return 1, nil, nil
	}
	v, err := canon.ReadFile(path, 0)
	if err != nil {
		return 0, nil, err
	}
	m, _ := v.(map[string]any)
	k, ok := m["repeats"].(float64)
	if !ok || k != float64(int(k)) || k < 2 || k > workload.MaxRepeats {
		return 0, nil, fmt.Errorf("%s: repeats must be an integer from 2 to %d", repeats.File, workload.MaxRepeats)
	}
	return int(k), v, nil
}

// RepeatReportFiles lists the report files a run directory with k
// repeats holds, in repeat order: each report-rNN.json, or budget-rNN.json
// where that repeat exhausted its habitat budget.
func RepeatReportFiles(dir string, k int) []string {
	out := make([]string, 0, k)
	for rep := 1; rep <= k; rep++ {
		name := workload.RepeatFile(rundir.ReportFile, rep)
		if !regular(filepath.Join(dir, name)) && regular(filepath.Join(dir, workload.RepeatFile(rundir.BudgetFile, rep))) {
			name = workload.RepeatFile(rundir.BudgetFile, rep)
		}
		out = append(out, name)
	}
	return out
}

func regular(path string) bool {
	st, err := os.Lstat(path)
	return err == nil && st.Mode().IsRegular()
}

// memberPath names member key of the JSON object at path ("" is the root).
func memberPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// sameJSON reports whether two values encode to the same canonical JSON.
func sameJSON(a, b any) bool {
	x, err1 := canon.Encode(a)
	y, err2 := canon.Encode(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}
