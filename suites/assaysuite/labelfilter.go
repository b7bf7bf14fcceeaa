package assaysuite

import (
	"fmt"
	"slices"
	"strings"

	"github.com/algal-assay/assay/harness/workload"
	"github.com/algal-assay/assay/internal/suggest"
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
)

// specLabels lists, for every spec Workloads declares, the labels Ginkgo
// filters it by: its workload container's and its own.
func specLabels(paths []string, ws []*workload.Workload) [][]string {
	var out [][]string
	for i, p := range paths {
		w := ws[i]
		if w == nil {
			out = append(out, fileLabels(p))
			continue
		}
		base := []string{w.Name, string(w.Kind)}
		own := []string{"run", "verify"}
		if w.Kind == workload.KindBench {
			own = append(own, "system")
		} else {
			own = append(own, "candidates")
		}
		if len(w.Gate.Rules) > 0 {
			own = append(own, "gate")
		}
		for _, l := range own {
			out = append(out, append(slices.Clone(base), l))
		}
	}
	return out
}

// unmatchedFilter explains a label filter that selects none of the specs
// (a typo in -ginkgo.label-filter would otherwise run 0 specs and pass),
// naming the nearest labels; "" when the filter is empty, does not parse
// (Ginkgo reports that itself) or matches a spec.
func unmatchedFilter(filter string, specs [][]string) string {
	if strings.TrimSpace(filter) == "" {
		return ""
	}
	match, err := types.ParseLabelFilter(filter)
	if err != nil {
		return ""
	}
	var all []string
	for _, labels := range specs {
		if match(labels) {
			return ""
		}
		for _, l := range labels {
			if !slices.Contains(all, l) {
				all = append(all, l)
			}
		}
	}
	slices.Sort(all)
	msg := fmt.Sprintf("-ginkgo.label-filter=%q matches no workload's spec, so nothing would run", filter)
	var hints []string
	for _, tok := range filterTokens(filter) {
		if slices.Contains(all, tok) {
			continue
		}
		if near, ok := suggest.Closest(tok, all); ok {
			hints = append(hints, fmt.Sprintf("%q for %q", near, tok))
		}
	}
	if len(hints) > 0 {
		msg += "; did you mean " + strings.Join(hints, ", ") + "?"
	}
	return msg + "\nthe labels are: " + strings.Join(all, ", ")
}

// filterTokens are the plain labels a filter names (not regular
// expressions or key:value selectors), which Ginkgo accepts as labels.
func filterTokens(filter string) []string {
	var out []string
	for _, tok := range strings.FieldsFunc(filter, func(r rune) bool { return strings.ContainsRune("&|!,() \t", r) }) {
		if strings.HasPrefix(tok, "/") || strings.Contains(tok, ":") {
			continue
		}
		if l, err := types.ValidateAndCleanupLabel(tok, types.CodeLocation{}); err == nil && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// describeUnmatchedFilter declares the one spec the filter selects, which
// fails saying what the filter missed: labelled with the filter's own
// labels so that the filter selects it.
func describeUnmatchedFilter(msg string) {
	ginkgo.It("matches the label filter", ginkgo.Label(filterTokens(ginkgo.GinkgoLabelFilter())...), func() {
		ginkgo.Fail(msg)
	})
}
