package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/evidence"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness/liverun"
	"github.com/algal-assay/assay/harness/rundoc"
	"github.com/algal-assay/assay/harness/workload"
	"github.com/algal-assay/assay/internal/atomicfile"
	"github.com/spf13/cobra"
)

// measureFlags are shared by the bench and foundry verbs.
type measureFlags struct {
	execFlags
	live              liveFlags
	dir, out, modules string
	concurrency       int
	strictSplits      bool
}

func (f *measureFlags) storeFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.dir, "dir", store.DefaultDir, "content-addressed store holding manifests and receipts")
	cmd.Flags().StringVar(&f.modules, "modules", "", "admit every *.algal.json in this directory first (children named by digest)")
}

// runFlags are the flags of a verb that runs organisms: the store, the
// executor flags, --out and --concurrency.
func (f *measureFlags) runFlags(cmd *cobra.Command) {
	f.storeFlags(cmd)
	f.execFlags.add(cmd.Flags())
	cmd.Flags().StringVar(&f.out, "out", "", "write the report to this file (atomically, exactly the canonical bytes) as well as stdout")
	cmd.Flags().IntVar(&f.concurrency, "concurrency", 0, "cases in flight (default: one per CPU, at least 2); the report does not depend on it")
}

// foundryFlags are runFlags and --strict-splits, the flags of a verb that
// runs a foundry config.
func (f *measureFlags) foundryFlags(cmd *cobra.Command) {
	f.runFlags(cmd)
	cmd.Flags().BoolVar(&f.strictSplits, "strict-splits", false, "fail when a case's args appear in two splits (leakage)")
}

// loadFoundryConfig admits a foundry config and prints its warnings (split
// leakage) on stderr.
func (c *cli) loadFoundryConfig(path string, opts foundry.AdmitOptions) (*foundry.Config, error) {
	cfg, err := foundry.LoadConfig(path, opts)
	if err != nil {
		return nil, err
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintf(c.stderr, "assay: warning: %s\n", w)
	}
	return cfg, nil
}

// configRun are the options of a config run (`assay bench CONFIG`,
// `assay foundry CONFIG`, `assay foundry search CONFIG`): who answers its
// live executors, the workbench and the concurrency asked.
func (f *measureFlags) configRun(c *cli, cmd *cobra.Command, args []string, wb *vm.Workbench) (liverun.ConfigOptions, error) {
	a, err := f.live.answerer(c, cmd, args)
	if err != nil {
		return liverun.ConfigOptions{}, err
	}
	return liverun.ConfigOptions{Archive: a, Path: args[0], Workbench: wb, Concurrency: f.concurrency}, nil
}

// verifyFlags are the flags of a verb that verifies evidence offline.
func (f *measureFlags) verifyFlags(cmd *cobra.Command) {
	f.storeFlags(cmd)
	cmd.Flags().StringVar(&f.tools, "tools", "", "host tool registry `FILE` typing recorded tool effects")
}

func (f *measureFlags) workbench() (*vm.Workbench, error) {
	if f.concurrency < 0 {
		return nil, usagef("--concurrency must be positive")
	}
	return f.set().Workbench(f.dir, f.modules)
}

// emit prints a canonical JSON value on one line and, with --out, writes
// it atomically too: exactly the canonical bytes, no trailing newline, so
// the file's sha256 is upstream's.
func (c *cli) emit(v any, out string) error {
	b, err := canon.Encode(v)
	if err != nil {
		return err
	}
	if out != "" {
		if err := writeOut(out, b); err != nil {
			return err
		}
	}
	_, err = c.stdout.Write(append(b, '\n'))
	return err
}

// writeOut writes an --out file atomically.
func writeOut(path string, b []byte) error {
	if err := atomicfile.Write(path, b); err != nil {
		return &fault.Error{Code: fault.IOFailed, Message: fmt.Sprintf("%s: %v", path, err)}
	}
	return nil
}

// emitVerification prints a verification and exits 1 when it failed; on a
// terminal without --json it prints a readable summary instead.
func (c *cli) emitVerification(v *evidence.Verification) error {
	if c.readable() {
		if _, err := fmt.Fprint(c.stdout, evidence.Readable(v.Value())); err != nil {
			return err
		}
	} else if err := c.emit(v.Value(), ""); err != nil {
		return err
	}
	if !v.OK {
		return reported(fmt.Errorf("verification failed"))
	}
	return nil
}

// emitOutcome prints the document of a config run (and writes it with
// --out); a foundry's exhausted habitat budget exits 1, and so do live
// requests that got no answer.
func (c *cli) emitOutcome(o *liverun.Outcome, out string) error {
	if err := c.emit(o.Doc, out); err != nil {
		return err
	}
	if o.Exhausted {
		return reported(fmt.Errorf("habitat budget exhausted"))
	}
	return o.Failures()
}

func newBenchCmd(c *cli) *cobra.Command {
	var f measureFlags
	cmd := &cobra.Command{
		Use:   "bench CONFIG",
		Short: "Measure several systems on one case list (algal.bench.v1)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := workload.NotAConfig("bench", args[0]); err != nil {
				return err
			}
			wb, err := f.workbench()
			if err != nil {
				return err
			}
			cfg, err := bench.LoadConfig(args[0])
			if err != nil {
				return err
			}
			opts, err := f.configRun(c, cmd, args, wb)
			if err != nil {
				return err
			}
			o, err := liverun.RunBench(cmd.Context(), cfg, opts)
			if err != nil {
				return err
			}
			return c.emitOutcome(o, f.out)
		},
	}
	f.runFlags(cmd)
	addLiveFlags(cmd.Flags(), &f.live)
	verify := c.verifyVerb("verify REPORT", "Recompute every claim of a bench report and replay its receipts offline", bench.Verify)
	inspect := c.inspectVerb("inspect REPORT|RUN_DIR", "Print a bench report (or a workload run directory's) as a table", bench.InspectValue)
	cmd.AddCommand(verify, inspect)
	return cmd
}

func newFoundryCmd(c *cli) *cobra.Command {
	var f measureFlags
	cmd := &cobra.Command{
		Use:   "foundry CONFIG",
		Short: "Select one organism from a population by evidence (algal.foundry.v1)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := workload.NotAConfig("foundry", args[0]); err != nil {
				return err
			}
			wb, err := f.workbench()
			if err != nil {
				return err
			}
			cfg, err := c.loadFoundryConfig(args[0], foundry.AdmitOptions{StrictSplits: f.strictSplits})
			if err != nil {
				return err
			}
			opts, err := f.configRun(c, cmd, args, wb)
			if err != nil {
				return err
			}
			o, err := liverun.RunFoundry(cmd.Context(), cfg, opts)
			if err != nil {
				return err
			}
			return c.emitOutcome(o, f.out)
		},
	}
	f.foundryFlags(cmd)
	addLiveFlags(cmd.Flags(), &f.live)
	verifyDoc := foundry.VerifyDocument // a foundry or search report, or an exhausted account
	cmd.AddCommand(
		c.verifyVerb("verify REPORT", "Recompute every claim of a foundry report (or exhausted account) and replay its receipts", verifyDoc),
		c.verifyVerb("search-verify REPORT", "Upstream's spelling of verify for an algal.search.v1 report", verifyDoc),
		c.inspectVerb("inspect REPORT|RUN_DIR", "Print the ranked candidates and the column that decided each place", foundry.InspectDocument),
		c.inspectVerb("search-inspect REPORT", "Upstream's spelling of inspect for an algal.search.v1 report", foundry.InspectDocument),
		c.packVerb("pack REPORT --out DIR", "Verify a foundry report, then write its promoted organism's closure into DIR", false, true),
		c.packVerb("search-pack REPORT --out DIR", "Verify a search report, then write its result's promoted closure into DIR", true, true),
		c.packVerb("export REPORT --out BUNDLE", "Verify a foundry report, then write its promoted organism's closure to the file BUNDLE", false, false),
		c.foundrySearchVerb(), // search: cmd/assay/search.go
	)
	return cmd
}

// packVerb builds foundry pack / search-pack / export: packing is permitted
// only after successful verification, and nothing is written when any
// claim fails (exit 1). With toDir, --out is a directory receiving
// <hex>.bundle.json as upstream writes it; otherwise --out is the file.
func (c *cli) packVerb(use, short string, search, toDir bool) *cobra.Command {
	var f measureFlags
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long: short + ".\nThe report is verified offline first (as verify does); nothing is written when a claim fails.\n" +
			"A bundle file already present with other bytes is DIGEST_MISMATCH.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.out == "" {
				return usagef("%s needs --out", strings.Fields(use)[0])
			}
			wb, err := f.workbench()
			if err != nil {
				return err
			}
			v, err := canon.ReadFile(args[0], 0)
			if err != nil {
				return err
			}
			p, err := foundry.Pack(cmd.Context(), v, wb, wb.Store, foundry.PackOptions{Search: search, Out: f.out, ToDir: toDir})
			if err != nil {
				return err
			}
			if p.Bundle == nil {
				return c.emitVerification(p.Verification)
			}
			return c.emit(p.Value(), "")
		},
	}
	f.verifyFlags(cmd)
	cmd.Flags().StringVar(&f.out, "out", "", "bundle directory (pack) or file (export)")
	return cmd
}

// verifyVerb builds a `verify REPORT` subcommand: read the report, verify
// it against the --dir store, print the verification, exit 1 on failure.
func (c *cli) verifyVerb(use, short string, verify func(context.Context, any, evidence.Store) (*evidence.Verification, error)) *cobra.Command {
	var f measureFlags
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			wb, err := f.workbench()
			if err != nil {
				return err
			}
			v, err := rundoc.Report(args[0])
			if err != nil {
				return err
			}
			res, err := verify(cmd.Context(), v, wb)
			if err != nil {
				return err
			}
			return c.emitVerification(res)
		},
	}
	f.verifyFlags(cmd)
	return cmd
}

// inspectVerb builds an `inspect REPORT` subcommand that renders a report
// for people.
func (c *cli) inspectVerb(use, short string, render func(any) (string, error)) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			v, err := rundoc.Report(args[0])
			if err != nil {
				return err
			}
			out, err := render(v)
			if err != nil {
				return err
			}
			// With --json: the report document it read, whole, as one
			// canonical line.
			return c.answer(v, func(w io.Writer) error {
				_, err := fmt.Fprint(w, out)
				return err
			})
		},
	}
}
