package foundry

import (
	"fmt"
	"strings"
	"text/tabwriter"
)

// InspectSearch renders a search report for people: one line per
// generation (proposals, population, winner and its scores), then the
// result's ranked table as Inspect renders it.
func InspectSearch(s *SearchReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "search %s\ngenerator %s\n\n", s.Digest, s.GeneratorDigest)
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "generation\tproposed\tpopulation\tpromoted\tdigest\tvalidation\ttrain\tgenerator run")
	for i := range s.Generations {
		g := &s.Generations[i]
		key, val, train := "?", "-", "-"
		for k := range g.Candidates {
			if c := &g.Candidates[k]; c.ManifestDigest == g.Promoted {
				key = c.ManifestKey
				val = fmt.Sprintf("%d/%d", c.Validation.Passed, c.Validation.Total)
				train = fmt.Sprintf("%d/%d", c.Train.Passed, c.Train.Total)
			}
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", g.Index, len(g.Proposed), len(g.Candidates),
			key, short(g.Promoted), val, train, short(g.ReceiptDigest))
	}
	tw.Flush()
	b.WriteString("\nresult (holdout unsealed once, after the last generation):\n")
	b.WriteString(Inspect(s.Result))
	return b.String()
}

// InspectDocument parses a foundry or search report strictly, by its
// contract, and renders it.
func InspectDocument(v any) (string, error) {
	if m, ok := v.(map[string]any); ok && m["contract"] == SearchContract {
		s, err := ParseSearchReport(v)
		if err != nil {
			return "", err
		}
		return InspectSearch(s), nil
	}
	return InspectValue(v)
}
