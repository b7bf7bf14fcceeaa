package foundry

import (
	"fmt"
	"strings"
	"text/tabwriter"
)

// Inspect renders a report for people: every candidate in promotion order
// with its scores and costs and, for each place, the criterion that put it
// ahead of the next candidate; then the holdout, lineage and budget.
func Inspect(r *Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "foundry %s\npromoted %s\n\n", r.Digest, r.Promoted)
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "rank\tcandidate\tdigest\tvalidation\ttrain\tagent calls\twork units\ttokens in/out\tdecided by")
	order := Rank(r.Candidates)
	for place, i := range order {
		c := &r.Candidates[i]
		decided := "last place"
		if place+1 < len(order) {
			decided = Decided(c, &r.Candidates[order[place+1]])
		}
		mark := ""
		if c.ManifestDigest == r.Promoted {
			mark = " (promoted)"
		}
		fmt.Fprintf(tw, "%d\t%s%s\t%s\t%d/%d\t%d/%d\t%d\t%d\t%d/%d\t%s\n", place+1, c.ManifestKey, mark, short(c.ManifestDigest),
			c.Validation.Passed, c.Validation.Total, c.Train.Passed, c.Train.Total,
			c.Work.AgentCalls, c.Work.Units, c.Usage.TokensIn, c.Usage.TokensOut, decided)
	}
	tw.Flush()
	fmt.Fprintf(&b, "\nholdout %d/%d on the promoted candidate only\n", r.Holdout.Passed, r.Holdout.Total)
	for i := range r.Holdout.Cases {
		c := &r.Holdout.Cases[i]
		verdict := "fail"
		if c.Passed {
			verdict = "pass"
		}
		fmt.Fprintf(&b, "  %s  %s  %s  %s\n", c.ID, verdict, c.Outcome, c.ReceiptDigest)
	}
	if r.Scorer != nil {
		b.WriteString("scorer: algal.expr.v1 program\n")
	} else {
		b.WriteString("scorer: exact match\n")
	}
	if r.Lineage != nil {
		fmt.Fprintf(&b, "lineage: generator %s, run %s\n", r.Lineage.GeneratorDigest, r.Lineage.ReceiptDigest)
	}
	if a := r.Budget; a != nil {
		fmt.Fprintf(&b, "budget: %d/%d work, %d/%d attempts, %d/%d runs charged\n",
			a.Charged.Work, a.Limits.Work, a.Charged.Attempts, a.Limits.Attempts, a.Charged.Runs, a.Limits.Runs)
	}
	return b.String()
}

// Decided names the criterion that promotes a over b, with both values.
func Decided(a, b *CandidateResult) string {
	_, by := compareCandidates(a, b)
	switch by {
	case ByValidation:
		return fmt.Sprintf("validation %d/%d > %d/%d", a.Validation.Passed, a.Validation.Total, b.Validation.Passed, b.Validation.Total)
	case ByTrain:
		return fmt.Sprintf("tie on validation; train %d/%d > %d/%d", a.Train.Passed, a.Train.Total, b.Train.Passed, b.Train.Total)
	case ByAgentCalls:
		return fmt.Sprintf("tie on rates; fewer agent calls %d < %d", a.Work.AgentCalls, b.Work.AgentCalls)
	case ByUnits:
		return fmt.Sprintf("tie on rates and agent calls; fewer work units %d < %d", a.Work.Units, b.Work.Units)
	case ByDigest:
		return "digest order"
	}
	return "identical"
}

func short(d string) string {
	if len(d) > len("sha256:")+12 {
		return d[:len("sha256:")+12]
	}
	return d
}

// InspectValue parses a report value strictly and renders it.
func InspectValue(v any) (string, error) {
	r, err := ParseReport(v)
	if err != nil {
		return "", err
	}
	return Inspect(r), nil
}
