package main

import (
	"github.com/algal-assay/assay/engine/bundle"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/mailbox"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness"
	"github.com/spf13/cobra"
)

func newResumeCmd(c *cli) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "resume RECEIPT [MANIFEST]",
		Short: "Continue a suspended run: replay its completed prefix, re-issue the suspended request",
		Long: "Resume a run from its receipt (a checkpoint). The checkpoint must verify offline first;\n" +
			"then every recorded effect except the suspended ones (tool effects included) replays by\n" +
			"request digest and only the suspended request (or anything never recorded) goes live,\n" +
			"with exactly the digest it had. Prints the new receipt; exit 0 when it completes, 1 when it\n" +
			"failed or suspended again, 2 on an error.\n" +
			"Without MANIFEST the manifest is read from the store (--dir, default .algal) by manifestDigest.\n" +
			"Flags as for run: the executor flags, --approvals, --modules, --write (persist the new receipt),\n" +
			"--out FILE.",
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.dirSet = cmd.Flags().Changed("dir")
			rec, ref, err := c.resume(cmd, args, f)
			if err != nil {
				return err
			}
			return c.emitRun(rec, ref, f.out)
		},
	}
	f.add(cmd)
	addLiveFlags(cmd.Flags(), &f.live)
	return cmd
}

func (c *cli) resume(cmd *cobra.Command, args []string, f runFlags) (map[string]any, string, error) {
	st, err := f.openRunStore()
	if err != nil {
		return nil, "", err
	}
	if err := admitModules(st, f.modules); err != nil {
		return nil, "", err
	}
	cp, err := readReceipt(args[0])
	if err != nil {
		return nil, "", err
	}
	m, err := manifestFor(st, cp, args[1:])
	if err != nil {
		return nil, "", err
	}
	if _, err := st.Put(store.Manifests, m.Value); err != nil {
		return nil, "", err
	}
	rec, err := c.runHosted(cmd, args, f, st, m, "resume", func(host *vm.Host) (map[string]any, string, error) {
		rec, err := vm.Resume(cp, m, host)
		from, _ := cp["digest"].(string)
		return rec, "from " + from, err
	})
	if err != nil {
		return nil, "", err
	}
	return c.persistReceipt(st, rec, f)
}

// runHosted runs m on the host f builds over st (newHost): start runs it
// (vm.Run or vm.Resume) and names its case, and a recording of live
// answers is finished as verb's (run, resume, call).
func (c *cli) runHosted(cmd *cobra.Command, args []string, f runFlags, st store.Store, m *manifest.Manifest, verb string,
	start func(host *vm.Host) (rec map[string]any, caseID string, err error)) (map[string]any, error) {
	mr, err := f.openManifestRun(c, cmd, args, m)
	if err != nil {
		return nil, err
	}
	host, err := newHost(st, f, m, mr.Recording())
	if err != nil {
		return nil, err
	}
	rec, caseID, err := start(host)
	if err != nil {
		return nil, err
	}
	if err := mr.Finish(st, rec, f.tools, verb, caseID); err != nil {
		return nil, err
	}
	return rec, nil
}

// gateApprovals admits the approvals executor for gate requests ahead of
// every routed executor (scripted fixtures included): as a request-aware
// executor it serves every gate request, whatever its route, and a gate
// absent from the file suspends rather than falling through to a fixture.
type gateApprovals struct{ *effect.Approvals }

func (g gateApprovals) Serves(req effect.Request) bool {
	k, _ := req["kind"].(string)
	return req["contract"] == effect.EffectContract && k == effect.KindGate
}

// newHost builds the host run and resume share: the approvals executor
// (--approvals) ahead of the flag executors, the mailbox host tools over
// the store directory (denied unless the run persists), the --tools
// registry and configured transports.
func newHost(st store.Store, f runFlags, m *manifest.Manifest, rec *harness.Recording) (*vm.Host, error) {
	var execs []effect.Executor
	if f.approvals != "" {
		execs = append(execs, gateApprovals{effect.NewApprovals(f.approvals)})
	}
	flagExecs, err := f.executors(st, m, rec)
	if err != nil {
		return nil, err
	}
	execs = append(execs, flagExecs...)
	var svc *mailbox.Service
	if f.persists() {
		svc = mailbox.Open(f.dir)
	}
	router := effect.NewRouter(append(execs, mailbox.NewTools(svc))...)
	if f.tools != "" {
		if router.Tools, err = effect.LoadTools(f.tools); err != nil {
			return nil, err
		}
	}
	host := &vm.Host{Store: st, Router: router}
	if f.transportsFile != "" {
		if host.Sources, err = bundle.LoadTransports(f.transportsFile); err != nil {
			return nil, err
		}
	}
	return host, nil
}
