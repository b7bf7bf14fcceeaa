package main

import (
	"fmt"
	"strings"

	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/receipt"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness/liverun"
	"github.com/spf13/cobra"
)

// runFlags are the flags of run and resume.
type runFlags struct {
	execFlags
	args, modules, dir, out, approvals string
	// write persists the receipt and manifest into --dir (upstream's
	// --write); dirSet records an explicit --dir, which Assay has always
	// treated as "persist".
	write, dirSet, strictSplits bool
	concurrency                 int
	repeats                     int
	transports                  []string
	report                      workloadReport
	live                        liveFlags
	shard                       string
	fresh                       bool
}

func (f *runFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	f.execFlags.add(fl)
	fl.StringVar(&f.args, "args", "", "run arguments `FILE` {\"<input cell>\":{\"<port>\":value}}; - reads stdin")
	fl.StringVar(&f.modules, "modules", "", "`DIR` of *.algal.json modules to admit first")
	fl.StringVar(&f.dir, "dir", store.DefaultDir, "file store `DIR` (manifests, values, slots, memo, receipts, mailboxes)")
	fl.BoolVar(&f.write, "write", false, "persist the receipt (and manifest) into --dir and print its digest on stderr")
	fl.StringVar(&f.out, "out", "", "also write the receipt to `FILE` (atomically, exactly the canonical bytes)")
	fl.StringVar(&f.approvals, "approvals", "", "gate approvals `FILE` {\"<gate cell id>\":\"<label>\"}")
	fl.StringArrayVar(&f.transports, "transport", nil, "`NAME=DIR` bundle transport (repeatable)")
}

// persists reports whether the run writes through to --dir: with --write
// as upstream, or with an explicit --dir as Assay always has. Otherwise
// the store is read through a memory overlay and left unchanged.
func (f *runFlags) persists() bool { return f.write || f.dirSet }

// openRunStore opens --dir with --modules admitted, through an overlay
// when the run does not persist (vm.OpenRunStore).
func (f *runFlags) openRunStore() (store.Store, error) {
	return vm.OpenRunStore(f.dir, f.modules, f.persists())
}

func newRunCmd(c *cli) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [MANIFEST.json | PATH...]",
		Short: "Run one organism manifest, or the YAML workloads under PATHs (default suites/)",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			f.dirSet = cmd.Flags().Changed("dir")
			if len(args) != 1 || !strings.HasSuffix(args[0], ".json") {
				wf := workloadFlags{dir: f.dir, out: f.out, concurrency: f.concurrency, repeats: f.repeats, strictSplits: f.strictSplits, report: f.report, live: f.live, shard: f.shard, fresh: f.fresh,
					dirSet: f.dirSet, outSet: cmd.Flags().Changed("out")}
				if wf.out == "" {
					wf.out = "runs"
				}
				return runWorkloads(c, args, wf)
			}
			rec, ref, err := c.runManifest(cmd, args, f)
			if err != nil {
				return err
			}
			return c.emitRun(rec, ref, f.out)
		},
	}
	f.add(cmd)
	cmd.Flags().IntVar(&f.concurrency, "concurrency", 0, "workloads: cases in flight (0: one per CPU, at least two)")
	cmd.Flags().IntVar(&f.repeats, "repeats", 0, "workloads: run every case this many times (1..32) as independent samples (0: each workload's repeats:)")
	cmd.Flags().BoolVar(&f.strictSplits, "strict-splits", false, "workloads: reject foundry workloads whose splits share identical args")
	addWorkloadReportFlags(cmd.Flags(), &f.report)
	addLiveFlags(cmd.Flags(), &f.live)
	addShardFlag(cmd.Flags(), &f.shard)
	addFreshFlag(cmd.Flags(), &f.fresh)
	return cmd
}

// emitRun prints a receipt (and writes it with --out), after the digest it
// is stored under on stderr when --write gave one (ref); a receipt whose
// outcome is not complete exits 1, as upstream's CLI does.
func (c *cli) emitRun(rec map[string]any, ref, out string) error {
	if ref != "" {
		fmt.Fprintf(c.stderr, "receipt %s\n", ref)
	}
	if err := c.emit(rec, out); err != nil {
		return err
	}
	if o := rec["outcome"]; o != receipt.Complete {
		return reported(fmt.Errorf("run outcome %v", o))
	}
	return nil
}

// runManifest runs one manifest file; ref is the stored receipt's digest
// when --write persisted it.
func (c *cli) runManifest(cmd *cobra.Command, cmdArgs []string, f runFlags) (map[string]any, string, error) {
	// Every input is read before the store is opened, so a bad input
	// leaves --dir as it was.
	m, err := manifest.ReadFile(cmdArgs[0])
	if err != nil {
		return nil, "", err
	}
	args := map[string]any{}
	if f.args != "" {
		if args, err = receipt.ReadArgs(f.args, c.stdin); err != nil {
			return nil, "", err
		}
	} else if err := m.NeedsNoArgs(cmdArgs[0]); err != nil {
		return nil, "", err
	}
	st, err := f.openRunStore()
	if err != nil {
		return nil, "", err
	}
	if _, err := st.Put(store.Manifests, m.Value); err != nil {
		return nil, "", err
	}
	rec, err := c.runHosted(cmd, cmdArgs, f, st, m, "run", f.transports, liverun.RunArgs(m, args))
	if err != nil {
		return nil, "", err
	}
	return c.persistReceipt(st, rec, f)
}

// persistReceipt stores a receipt when the run persists; the digest is
// printed on stderr only under --write, as upstream does.
func (c *cli) persistReceipt(st store.Store, rec map[string]any, f runFlags) (map[string]any, string, error) {
	if !f.persists() {
		return rec, "", nil
	}
	ref, err := st.Put(store.Runs, rec)
	if err != nil {
		return nil, "", err
	}
	if !f.write {
		ref = ""
	}
	return rec, ref, nil
}
