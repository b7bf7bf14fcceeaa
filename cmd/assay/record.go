package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/harness"
	"github.com/algal-assay/assay/runrecord"
	"github.com/spf13/cobra"
)

// maxAssemblyArg bounds the --assembly file.
const maxAssemblyArg = 4 << 20

func newRecordCmd(c *cli) *cobra.Command {
	record := &cobra.Command{
		Use:   "record",
		Short: "Inspect a run directory's foundry-run.yml",
	}
	var asJSON bool
	var pipeline, assemblyPath string
	var workloads []string
	show := &cobra.Command{
		Use:   "show RUN_DIR",
		Short: "Show a run record: pipeline, status, phases, which phase last wrote each file",
		Long: `Show reads RUN_DIR/foundry-run.yml and prints the pipeline, run status,
every phase (n, kind, name, status, iterations, selected) and which phase
last wrote each file.

The record's assembly_sha256 is compared with today's assembly of the same
workload (match, drift, or unknown when the record has none): the workloads
under --workloads (default suites/ when it exists), or the _assembly.json
given with --assembly. The record is only compared with a workload of the same pipeline
unless --pipeline names the one to read it against.

Exit status: 0 when a record was read (whatever the run's status), 1 when it
is missing or cannot be parsed (a reconstructed view is printed), 2 usage.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			opts := runrecord.Options{Pipeline: pipeline}
			known, err := currentAssemblies(c, workloads)
			if err != nil {
				return err
			}
			opts.Workloads = known
			if assemblyPath != "" {
				data, err := c.readAll(assemblyPath, maxAssemblyArg)
				if err != nil {
					return usagef("--assembly %s: %v", assemblyPath, err)
				}
				a, err := runrecord.ParseAssembly(data)
				if err != nil {
					return usagef("--assembly %s: %v", assemblyPath, err)
				}
				name := a.Pipeline
				if pipeline != "" {
					name = pipeline
				}
				opts.Workloads = append(opts.Workloads, runrecord.Workload{Pipeline: name, Assembly: data})
			}
			v, err := runrecord.Read(args[0], opts)
			if err != nil {
				return err
			}
			if asJSON {
				b, err := canon.Encode(v.Value())
				if err != nil {
					return err
				}
				if _, err := fmt.Fprintf(c.stdout, "%s\n", b); err != nil {
					return err
				}
			} else if err := printView(c.stdout, v); err != nil {
				return err
			}
			if v.State != runrecord.StateRecord {
				return reported(v.Problem)
			}
			return nil
		},
	}
	show.Flags().BoolVar(&asJSON, "json", false, "print the view as canonical JSON")
	show.Flags().StringVar(&pipeline, "pipeline", "", "read the record against this pipeline's workload")
	show.Flags().StringVar(&assemblyPath, "assembly", "", "today's _assembly.json for the workload (or - for stdin)")
	show.Flags().StringSliceVar(&workloads, "workloads", nil, "workload files or directories giving today's assemblies (default suites/ when it exists)")
	record.AddCommand(show)
	return record
}

// currentAssemblies builds today's assembly of every workload under paths
// (default suites/ when present), so a record can be checked for drift. A
// workload that no longer loads is reported on stderr and left out: the
// record is then compared with nothing rather than with a guess.
func currentAssemblies(c *cli, paths []string) ([]runrecord.Workload, error) {
	if len(paths) == 0 {
		if st, err := os.Stat(defaultSuites); err != nil || !st.IsDir() {
			return nil, nil
		}
		paths = []string{defaultSuites}
	}
	files, err := harness.Discover(paths...)
	if err != nil {
		return nil, err
	}
	var out []runrecord.Workload
	for _, f := range files {
		w, err := harness.Load(f)
		if err != nil {
			fmt.Fprintf(c.stderr, "assay: warning: %v\n", err)
			continue
		}
		data, err := runrecord.EncodeAssembly(harness.Assembly(w))
		if err != nil {
			return nil, err
		}
		out = append(out, runrecord.Workload{Pipeline: w.Name, Assembly: data})
	}
	return out, nil
}

// gateVerdict reads the run directory's gate.json for the status line:
// "gate passed, 8 of 8 rules hold", "gate FAILED, ...", or why there is
// no verdict. The file is a derived summary: ci verify re-derives it.
func gateVerdict(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, harness.GateFile))
	if err != nil {
		return "no gate verdict: " + harness.GateFile + " was not written"
	}
	var g struct {
		Passed *bool `json:"passed"`
		Rules  []struct {
			Passed bool `json:"passed"`
		} `json:"rules"`
	}
	if json.Unmarshal(data, &g) != nil || g.Passed == nil {
		return "no gate verdict: " + harness.GateFile + " does not parse"
	}
	held := 0
	for _, r := range g.Rules {
		if r.Passed {
			held++
		}
	}
	word := "passed"
	if !*g.Passed {
		word = "FAILED"
	}
	if len(g.Rules) == 0 {
		return "gate " + word + ", no rules"
	}
	return fmt.Sprintf("gate %s, %d of %d rules hold", word, held, len(g.Rules))
}

func printView(w io.Writer, v *runrecord.View) error {
	var b strings.Builder
	fmt.Fprintf(&b, "run: %s\n", v.Dir)
	if v.State != runrecord.StateRecord {
		fmt.Fprintf(&b, "record: %s: %s\n", v.State, v.Problem.Error())
		printReconstruction(&b, v.Reconstructed)
		_, err := io.WriteString(w, b.String())
		return err
	}
	r := v.Record
	finished := "null"
	if r.FinishedAt != nil {
		finished = stamp(*r.FinishedAt)
	}
	fmt.Fprintf(&b, "pipeline: %s\nrun_slug: %s\nharness_name: %s\nsource_revision: %d\nstatus: %s (%s)\nstarted_at: %s\nfinished_at: %s\n",
		r.Pipeline, r.RunSlug, r.HarnessName, r.SourceRevision, r.Status, gateVerdict(v.Dir), stamp(r.StartedAt), finished)
	head := orNull(r.FoundryHead)
	if r.FoundryModified {
		head += " (modified: the working tree had uncommitted changes, so this commit does not pin what the run read)"
	}
	fmt.Fprintf(&b, "assembly_sha256: %s\nfoundry_head: %s\n", orNull(r.AssemblySHA256), head)
	fmt.Fprintf(&b, "pipeline check: %s: %s\n", v.Pipeline.Check, v.Pipeline.Message)
	fmt.Fprintf(&b, "assembly: %s: %s\n", v.Assembly.Check, v.Assembly.Message)
	for _, warn := range v.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", warn)
	}
	b.WriteString("phases:\n")
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  n\tkind\tname\tstatus\titerations\tselected")
	for _, p := range r.Phases {
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%d\t%s\n", p.N, p.Kind, p.Name(), p.Status, p.Iterations, orDash(p.Selected))
	}
	_ = tw.Flush() // into a strings.Builder
	b.WriteString("files (last writer):\n")
	if len(v.Writers) == 0 {
		b.WriteString("  none\n")
	}
	tw = tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	for _, fw := range v.Writers {
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
	_, err := io.WriteString(w, b.String())
	return err
}

func printReconstruction(b *strings.Builder, r *runrecord.Reconstruction) {
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
		var ph []string
		for _, n := range f.Phases {
			ph = append(ph, fmt.Sprint(n))
		}
		who := "writer unknown"
		switch len(ph) {
		case 0:
		case 1:
			who = "declared by phase " + ph[0]
		default:
			who = "declared by phases " + strings.Join(ph, ", ") + " (ambiguous)"
		}
		fmt.Fprintf(b, "    %s: %s\n", f.File, who)
	}
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
