package main

import (
	"context"
	"fmt"

	"github.com/algal-assay/assay/engine/atomicfile"
	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/bundle"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/foundry"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/spf13/cobra"
)

// measureFlags are shared by the bench and foundry verbs.
type measureFlags struct {
	dir, out, modules string
	concurrency       int
	strictSplits      bool
}

func (f *measureFlags) storeFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.dir, "dir", ".algal", "content-addressed store holding manifests and receipts")
	cmd.Flags().StringVar(&f.modules, "modules", "", "admit every *.algal.json in this directory first (children named by digest)")
}

func (f *measureFlags) runFlags(cmd *cobra.Command) {
	f.storeFlags(cmd)
	cmd.Flags().StringVar(&f.out, "out", "", "write the report to this file (atomically) as well as stdout")
	cmd.Flags().IntVar(&f.concurrency, "concurrency", 0, "cases in flight (default: one per CPU, at least 2); the report does not depend on it")
}

func (f *measureFlags) workbench() (*vm.Workbench, error) {
	if f.concurrency < 0 {
		return nil, usagef("--concurrency must be positive")
	}
	wb, err := vm.NewWorkbench(f.dir)
	if err != nil {
		return nil, err
	}
	if f.modules != "" {
		if err := vm.AdmitModules(wb.Store, f.modules); err != nil {
			return nil, err
		}
	}
	return wb, nil
}

// emit prints a canonical JSON value and, with --out, writes it too.
func (c *cli) emit(v any, out string) error {
	b, err := canon.Encode(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if out != "" {
		if err := atomicfile.Write(out, b); err != nil {
			return &fault.Error{Code: "IO_FAILED", Message: fmt.Sprintf("%s: %v", out, err)}
		}
	}
	_, err = c.stdout.Write(b)
	return err
}

// verification is what bench and foundry verification print.
type verification interface {
	Value() map[string]any
}

// emitVerification prints a verification and exits 1 when it failed.
func (c *cli) emitVerification(v verification, ok bool) error {
	if err := c.emit(v.Value(), ""); err != nil {
		return err
	}
	if !ok {
		return reported(fmt.Errorf("verification failed"))
	}
	return nil
}

func init() {
	register(func(c *cli) *cobra.Command {
		var f measureFlags
		cmd := &cobra.Command{
			Use:   "bench CONFIG",
			Short: "Measure several systems on one case list (algal.bench.v1)",
			Long: "Run every system of an algal.bench.config.v1 on every case, store the receipts in --dir,\n" +
				"and print the algal.bench.v1 report: pass claims, usage, attribution and the Pareto set.\n" +
				"Subcommands verify a report offline and render it for people.",
			Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				wb, err := f.workbench()
				if err != nil {
					return err
				}
				cfg, err := bench.LoadConfig(args[0])
				if err != nil {
					return err
				}
				rep, err := bench.Run(cmd.Context(), cfg, wb, bench.Options{Concurrency: f.concurrency})
				if err != nil {
					return err
				}
				return c.emit(rep.Value(), f.out)
			},
		}
		f.runFlags(cmd)
		verify := c.verifyVerb("Recompute every claim of a bench report and replay its receipts offline",
			func(ctx context.Context, v any, wb *vm.Workbench) (verification, bool, error) {
				res, err := bench.Verify(ctx, v, wb)
				if err != nil {
					return nil, false, err
				}
				return res, res.OK, nil
			})
		inspect := c.inspectVerb("Print a bench report as a table", func(v any) (string, error) {
			r, err := bench.ParseReport(v)
			if err != nil {
				return "", err
			}
			return bench.Inspect(r), nil
		})
		cmd.AddCommand(verify, inspect)
		return cmd
	})
	register(func(c *cli) *cobra.Command {
		var f measureFlags
		cmd := &cobra.Command{
			Use:   "foundry CONFIG",
			Short: "Select one organism from a population by evidence (algal.foundry.v1)",
			Long: "Evaluate every candidate of an algal.foundry.config.v1 on its train and validation cases,\n" +
				"promote one deterministically, run the holdout once on it, and print the algal.foundry.v1\n" +
				"report. With a habitat budget, a run that does not fit stops the foundry: the exhausted\n" +
				"algal.habitat-budget.v1 account is printed instead and the command exits 1. Cases whose args\n" +
				"appear in two splits are reported on stderr (an error with --strict-splits).",
			Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				wb, err := f.workbench()
				if err != nil {
					return err
				}
				cfg, err := foundry.LoadConfig(args[0], foundry.AdmitOptions{StrictSplits: f.strictSplits})
				if err != nil {
					return err
				}
				for _, w := range cfg.Warnings {
					fmt.Fprintf(c.stderr, "assay: warning: %s\n", w)
				}
				res, err := foundry.Run(cmd.Context(), cfg, wb, foundry.Options{Concurrency: f.concurrency})
				if err != nil {
					return err
				}
				if res.Exhausted != nil {
					if err := c.emit(res.Exhausted.Value(), f.out); err != nil {
						return err
					}
					return reported(fmt.Errorf("habitat budget exhausted"))
				}
				return c.emit(res.Report.Value(), f.out)
			},
		}
		f.runFlags(cmd)
		cmd.Flags().BoolVar(&f.strictSplits, "strict-splits", false, "fail when a case's args appear in two splits (leakage)")
		verify := c.verifyVerb("Recompute every claim of a foundry report (or exhausted account) and replay its receipts",
			func(ctx context.Context, v any, wb *vm.Workbench) (verification, bool, error) {
				res, err := foundry.VerifyDocument(ctx, v, wb) // foundry, search or exhausted account
				if err != nil {
					return nil, false, err
				}
				return res, res.OK, nil
			})
		inspect := c.inspectVerb("Print the ranked candidates and the column that decided each place", foundry.InspectDocument)
		var ef measureFlags
		export := &cobra.Command{
			Use:   "export REPORT --out BUNDLE",
			Short: "Verify a foundry report, then pack its promoted organism's closure as an algal.bundle.v1",
			Long: "Export is permitted only after successful verification: the report is verified offline\n" +
				"first, and nothing is written when any claim fails (exit 1).",
			Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				if ef.out == "" {
					return usagef("export needs --out BUNDLE")
				}
				wb, err := ef.workbench()
				if err != nil {
					return err
				}
				v, err := canon.ReadFile(args[0], 0)
				if err != nil {
					return err
				}
				r, err := foundry.ParseReport(v)
				if err != nil {
					return err
				}
				res, err := foundry.Verify(cmd.Context(), v, wb)
				if err != nil {
					return err
				}
				if !res.OK {
					return c.emitVerification(res, false)
				}
				b, err := bundle.Pack(wb.Store, r.Promoted)
				if err != nil {
					return err
				}
				data, err := canon.Encode(b.Value())
				if err != nil {
					return err
				}
				if err := atomicfile.Write(ef.out, append(data, '\n')); err != nil {
					return &fault.Error{Code: "IO_FAILED", Message: fmt.Sprintf("%s: %v", ef.out, err)}
				}
				return c.emit(map[string]any{"ok": true, "promoted": r.Promoted, "bundle": ef.out, "manifests": float64(len(b.Manifests)), "values": float64(len(b.Values))}, "")
			},
		}
		ef.storeFlags(export)
		export.Flags().StringVar(&ef.out, "out", "", "bundle file to write")
		cmd.AddCommand(verify, inspect, export, c.foundrySearchVerb()) // search: cmd/assay/search.go
		return cmd
	})
}

// verifyVerb builds a `verify REPORT` subcommand: read the report, verify
// it against the --dir store, print the verification, exit 1 on failure.
func (c *cli) verifyVerb(short string, verify func(context.Context, any, *vm.Workbench) (verification, bool, error)) *cobra.Command {
	var f measureFlags
	cmd := &cobra.Command{
		Use:   "verify REPORT",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			wb, err := f.workbench()
			if err != nil {
				return err
			}
			v, err := canon.ReadFile(args[0], 0)
			if err != nil {
				return err
			}
			res, ok, err := verify(cmd.Context(), v, wb)
			if err != nil {
				return err
			}
			return c.emitVerification(res, ok)
		},
	}
	f.storeFlags(cmd)
	return cmd
}

// inspectVerb builds an `inspect REPORT` subcommand that renders a report
// for people.
func (c *cli) inspectVerb(short string, render func(any) (string, error)) *cobra.Command {
	return &cobra.Command{
		Use:   "inspect REPORT",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			v, err := canon.ReadFile(args[0], 0)
			if err != nil {
				return err
			}
			out, err := render(v)
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(c.stdout, out)
			return err
		},
	}
}
