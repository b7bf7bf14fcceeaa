package console

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/algal-assay/assay/harness"
)

// PrintSummary prints one block per workload file: the verdict, the
// contender table, warnings, and every reason it failed, once each.
func PrintSummary(w io.Writer, results []*harness.Result) {
	for i, r := range results {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, headline(r))
		if r.Outcome != nil {
			printOutcome(w, r.Outcome)
		}
		for _, reason := range r.Reasons() {
			fmt.Fprintf(w, "  FAIL %s\n", reason)
		}
		if r.Outcome != nil && len(r.Outcome.Gates) > 0 {
			fmt.Fprintf(w, "  gate: %d of %d rules hold\n", rulesHeld(r.Outcome), len(r.Outcome.Gates))
		}
	}
}

// headline is a result's first line: verdict, workload and where its run
// directory is (or why there is none).
func headline(r *harness.Result) string {
	verdict := "PASS"
	if !r.Passed() {
		verdict = "FAIL"
	}
	switch {
	case r.Workload == nil:
		return fmt.Sprintf("%s %s (did not load)", verdict, r.Path)
	case r.ShardParts != nil:
		return fmt.Sprintf("%s %s %s (revision %d) part(s) %s of this shard -> %s (merge the shards for its verdict)", verdict, r.Workload.Kind, r.Workload.Name, r.Workload.Revision, joinInts(r.ShardParts), r.ShardDir)
	case r.Outcome == nil:
		return fmt.Sprintf("%s %s %s (revision %d) did not run", verdict, r.Workload.Kind, r.Workload.Name, r.Workload.Revision)
	}
	runs := ""
	if n, shape := r.RunCount(); n > 0 {
		runs = fmt.Sprintf(" %d runs (%s)", n, shape)
	}
	return fmt.Sprintf("%s %s %s (revision %d)%s -> %s", verdict, r.Workload.Kind, r.Workload.Name, r.Workload.Revision, runs, r.Outcome.RunDir)
}

// PrintVerdict ends the summary: why the job stopped, if it did, and how
// many of total workloads failed.
func PrintVerdict(w io.Writer, total, failed int, stopErr error) {
	if stopErr != nil {
		fmt.Fprintf(w, "\nSTOP %v\n", stopErr)
	}
	if failed > 0 {
		fmt.Fprintf(w, "\n%d of %d workloads failed\n", failed, total)
	} else {
		fmt.Fprintf(w, "\nall %d workloads passed\n", total)
	}
}

// printOutcome prints a run's contender table, warnings and notes.
func printOutcome(w io.Writer, o *harness.Outcome) {
	t := harness.SummaryTable(o)
	if len(t.Header) > 0 {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  "+strings.Join(t.Header, "\t"))
		for _, row := range t.Rows {
			fmt.Fprintln(tw, "  "+strings.Join(row, "\t"))
		}
		_ = tw.Flush()
	}
	for _, warn := range o.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", warn)
	}
	for _, note := range o.Notes {
		fmt.Fprintf(w, "  note: %s\n", note)
	}
}

// rulesHeld counts the gate rules that hold.
func rulesHeld(o *harness.Outcome) int {
	held := 0
	for _, g := range o.Gates {
		if g.Passed {
			held++
		}
	}
	return held
}

// joinInts is "1,2,3".
func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ",")
}

// plural is "1 word" or "n words".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
