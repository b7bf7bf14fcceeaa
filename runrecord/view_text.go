package runrecord

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteText prints the view for people (`assay record show`): the record's
// fields, with gate (the run directory's gate verdict, which the record
// does not hold) beside its status, the pipeline and assembly checks, the
// phases and the last writer of every file; for a missing or unreadable
// record, the problem and the view reconstructed from file names.
func (v *View) WriteText(w io.Writer, gate string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "run: %s\n", v.Dir)
	if v.State != StateRecord {
		fmt.Fprintf(&b, "record: %s: %s\n", v.State, v.Problem.Error())
		writeReconstruction(&b, v.Reconstructed)
		_, err := io.WriteString(w, b.String())
		return err
	}
	writeRecordFields(&b, v.Record, gate)
	fmt.Fprintf(&b, "pipeline check: %s: %s\n", v.Pipeline.Check, v.Pipeline.Message)
	fmt.Fprintf(&b, "assembly: %s: %s\n", v.Assembly.Check, v.Assembly.Message)
	for _, warn := range v.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", warn)
	}
	writePhases(&b, v.Record.Phases)
	writeWriters(&b, v.Writers)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeRecordFields prints the record's own fields, one per line.
func writeRecordFields(b *strings.Builder, r *Record, gate string) {
	finished := "null"
	if r.FinishedAt != nil {
		finished = stamp(*r.FinishedAt)
	}
	fmt.Fprintf(b, "pipeline: %s\nrun_slug: %s\nharness_name: %s\nsource_revision: %d\nstatus: %s (%s)\nstarted_at: %s\nfinished_at: %s\n",
		r.Pipeline, r.RunSlug, r.HarnessName, r.SourceRevision, r.Status, gate, stamp(r.StartedAt), finished)
	head := orNull(r.FoundryHead)
	if r.FoundryModified {
		head += " (modified: the working tree had uncommitted changes, so this commit does not pin what the run read)"
	}
	fmt.Fprintf(b, "assembly_sha256: %s\nfoundry_head: %s\n", orNull(r.AssemblySHA256), head)
}

// writePhases prints the phase table.
func writePhases(b *strings.Builder, phases []Phase) {
	b.WriteString("phases:\n")
	tw := tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  n\tkind\tname\tstatus\titerations\tselected")
	for _, p := range phases {
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%d\t%s\n", p.N, p.Kind, p.Name(), p.Status, p.Iterations, orDash(p.Selected))
	}
	_ = tw.Flush() // into a strings.Builder
}

// writeWriters prints which phase last wrote each file.
func writeWriters(b *strings.Builder, writers []FileWriter) {
	b.WriteString("files (last writer):\n")
	if len(writers) == 0 {
		b.WriteString("  none\n")
	}
	tw := tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
	for _, fw := range writers {
		it := ""
		if fw.Iteration > 0 {
			it = fmt.Sprintf(" iteration %d", fw.Iteration)
		}
		missing := ""
		if !fw.Present {
			missing = "\t(not in run directory)"
		}
		fmt.Fprintf(tw, "  %s\tphase %d%s\t%s\t%s%s\n", fw.File, fw.Phase, it, fw.ID, stamp(fw.At), missing)
	}
	_ = tw.Flush() // into a strings.Builder
}

// writeReconstruction prints what file names alone say about a run.
func writeReconstruction(b *strings.Builder, r *Reconstruction) {
	if r == nil {
		return
	}
	b.WriteString("reconstructed view (from file names, not a record):\n")
	switch {
	case r.Pipeline != "":
		fmt.Fprintf(b, "  pipeline: %s (from %s)\n", r.Pipeline, r.PipelineSource)
	case len(r.Candidates) > 1:
		fmt.Fprintf(b, "  pipeline: not distinguishable (%s)\n", strings.Join(r.Candidates, ", "))
	default:
		b.WriteString("  pipeline: unknown\n")
	}
	for _, n := range r.Notes {
		fmt.Fprintf(b, "  note: %s\n", n)
	}
	if len(r.Files) == 0 {
		b.WriteString("  files: none\n")
		return
	}
	b.WriteString("  files:\n")
	for _, f := range r.Files {
		fmt.Fprintf(b, "    %s: %s\n", f.File, declaredBy(f.Phases))
	}
}

// declaredBy says which phases declare a file.
func declaredBy(phases []int) string {
	var ph []string
	for _, n := range phases {
		ph = append(ph, fmt.Sprint(n))
	}
	switch len(ph) {
	case 0:
		return "writer unknown"
	case 1:
		return "declared by phase " + ph[0]
	}
	return "declared by phases " + strings.Join(ph, ", ") + " (ambiguous)"
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func orNull(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
