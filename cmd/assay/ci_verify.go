package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/algal-assay/assay/ci/artifact"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/spf13/cobra"
)

type ciVerifyFlags struct {
	dir, tools, repoDir string
	workloads, paths    []string
	json, allowEmpty    bool
}

func newCIVerifyCmd(c *cli) *cobra.Command {
	var f ciVerifyFlags
	cmd := &cobra.Command{
		Use:   "verify [ROOT...]",
		Short: "Verify every receipt, report, budget account and run directory offline",
		Long: `Find every algal.run.v1 receipt, algal.bench.v1 and algal.foundry.v1 report,
algal.habitat-budget.v1 account and run directory (foundry-run.yml) under the
roots (default ".") and verify each offline against the store --dir (default
.algal): receipts replay against their manifest from the store, reports and
accounts replay every receipt they cite. Nothing runs live and the store is
never written.

A run directory is checked as a whole, and nothing it says about itself is
believed: its record must agree with itself and with the directory (status
against phases, every listed artifact present, every file listed); its report
must verify; and its verification and every gate verdict are re-derived from
the report and its workload (found by name under --workloads, default ".",
and compiled to the run's slug), so an edited verification.json, gate.json or
record fails, naming the file and field. Fail closed: a report.json or an
evidence file whose contract this verifier does not know, a run directory
without its workload, and a root that is not a regular file or directory (a
FIFO) all fail. Staging directories of interrupted runs (.<slug>.partial-*),
directories left by an interrupted swap and temporary files of unfinished
writes (.tmp-*, also in the store) are listed as "note" lines: not evidence,
not failures.

A root holding artifact.json is a PR-check artifact (assay ci pr --artifact):
its base and head run directories are verified against the artifact's own
stores and workload files alone, and each side is held to its commit, listed
with git ls-tree in the repository --repo-dir (default "."): the side's tree
files must be the commit's, and every workload the commit holds under the
check's paths needs a run that verifies ("evidence missing for PATH"). A head
commit without workloads fails unless --allow-empty. The files the check
rendered at the artifact's root (diff.json, report.md, pr.html, comment.md)
are rendered again by this binary from the verified evidence and the
presentation artifact.json carries (labels, pointer, reproduce command, file
links, the check's own problems and notes), and each must be those bytes: a
difference fails, naming the file and, for diff.json, the JSON path of the
first differing field; a missing one fails too, and so does any other file or
directory at the root besides artifact.json, pr.json (or pr-number), base/
and head/.

The walk skips dot directories (.git, .algal), the store directory and the
objects of any content-addressed store; it follows no symbolic links.

Prints one line per item, "ok   PATH  KIND  DIGEST" or
"FAIL PATH  KIND  FIRST MISMATCH", or with --json one JSON object. Under GitHub
Actions (GITHUB_ACTIONS=true) every failure is also an "::error file=PATH::"
annotation (on stdout, or stderr with --json) and a Markdown table is appended
to $GITHUB_STEP_SUMMARY.

Exit 1 when anything fails to verify. Finding nothing is exit 1 when roots were
named (the evidence the step expected is missing) and exit 0 under the
default root (a repository without evidence yet). A root that does not exist or
is a symbolic link loop is the one-line JSON error {"error":{"code","message"},
"ok":false} with exit 2.`,
		RunE: func(cmd *cobra.Command, roots []string) error {
			return c.ciVerify(cmd.Context(), roots, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dir, "dir", store.DefaultDir, "store `DIR` the evidence is verified against")
	fl.StringVar(&f.tools, "tools", "", "host tool registry `FILE` typing recorded tool effects")
	fl.BoolVar(&f.json, "json", false, "print one JSON object instead of lines")
	fl.StringVar(&f.repoDir, "repo-dir", ".", "git repository `DIR` an artifact's commits are listed in (git ls-tree)")
	fl.BoolVar(&f.allowEmpty, "allow-empty", false, "finding no evidence (or, in an artifact, no workloads at the head commit) is not a failure")
	fl.StringSliceVar(&f.paths, "paths", nil, "an artifact's check must have covered exactly these workload `PATHS` (default: the ones it names)")
	fl.StringSliceVar(&f.workloads, "workloads", []string{"."}, "workload files or directories run directories are re-derived against (comma-separated or repeated)")
	return cmd
}

func (c *cli) ciVerify(ctx context.Context, roots []string, f ciVerifyFlags) error {
	if ctx == nil {
		ctx = context.Background()
	}
	rep, err := artifact.VerifyRoots(ctx, artifact.Roots{Roots: roots, StoreDir: f.dir, Workloads: f.workloads,
		RepoDir: f.repoDir, Paths: f.paths, AllowEmpty: f.allowEmpty,
		Evidence: f.evidence})
	if err != nil {
		return err
	}
	if f.json {
		b, err := canon.Encode(rep.Value())
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "%s\n", b)
	} else {
		fmt.Fprint(c.stdout, rep.Text())
	}
	w := c.stdout
	if f.json {
		w = c.stderr
	}
	if err := rep.Actions(w); err != nil {
		return err
	}
	if !rep.OK() {
		return reported(errors.New(rep.Summary()))
	}
	return nil
}

// evidence opens the store under --dir with the --tools registry. One ci
// verify is one trust scope: a receipt met again is replayed once.
func (f ciVerifyFlags) evidence() (*vm.Workbench, error) {
	wb, err := vm.NewWorkbench(f.dir)
	if err != nil {
		return nil, err
	}
	wb.Verified = &vm.VerifiedReceipts{}
	if f.tools != "" {
		if wb.Tools, err = effect.LoadTools(f.tools); err != nil {
			return nil, err
		}
	}
	return wb, nil
}
