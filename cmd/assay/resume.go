package main

import (
	"github.com/algal-assay/assay/engine/atomicfile"
	"github.com/algal-assay/assay/engine/bundle"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/mailbox"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/spf13/cobra"
)

func init() {
	register(func(c *cli) *cobra.Command {
		var f runFlags
		cmd := &cobra.Command{
			Use:   "resume RECEIPT [MANIFEST]",
			Short: "Continue a suspended run: replay its completed prefix, re-issue the suspended request",
			Long: "Resume a run from its receipt (a checkpoint). The checkpoint must verify offline first;\n" +
				"then every recorded effect except the suspended ones (tool effects included) replays by\n" +
				"request digest and only the suspended request (or anything never recorded) goes live,\n" +
				"with exactly the digest it had. Prints the new receipt and exits 0 whenever one was\n" +
				"produced, whatever its outcome (it may suspend again).\n" +
				"Without MANIFEST the manifest is read from the store (--dir) by manifestDigest.\n" +
				"--responses FILE  scripted executor table\n" +
				"--approvals FILE  gate decisions {\"<gate cell id>\":\"<label>\"}; a gate absent from it suspends\n" +
				"--executor-cmd C, --tools FILE, --transports FILE, --modules DIR as for run\n" +
				"--dir STORE       store holding the manifest, its children, slots and mailboxes\n" +
				"--out FILE        also write the receipt to FILE",
			Args: cobra.RangeArgs(1, 2),
			RunE: func(_ *cobra.Command, args []string) error {
				rec, err := c.resume(args, f)
				if err != nil {
					return err
				}
				return c.emitReceipt(rec, f.out)
			},
		}
		fl := cmd.Flags()
		fl.StringVar(&f.responses, "responses", "", "scripted responses JSON file")
		fl.StringVar(&f.approvals, "approvals", "", "gate approvals JSON file")
		fl.StringVar(&f.executorCmd, "executor-cmd", "", "command executor (sh -c)")
		fl.StringVar(&f.tools, "tools", "", "host tool registry JSON file")
		fl.StringVar(&f.modules, "modules", "", "directory of *.algal.json modules to admit first")
		fl.StringVar(&f.dir, "dir", "", "file store directory")
		fl.StringVar(&f.transportsFile, "transports", "", "transports JSON file (name -> directory or URL)")
		fl.StringVar(&f.out, "out", "", "also write the receipt to this file")
		return cmd
	})
}

// emitReceipt prints a receipt (and writes it to out when given).
func (c *cli) emitReceipt(rec map[string]any, out string) error {
	b, err := canon.Encode(rec)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if out != "" {
		if err := atomicfile.Write(out, b); err != nil {
			return &fault.Error{Code: "IO_FAILED", Message: err.Error()}
		}
	}
	_, err = c.stdout.Write(b)
	return err
}

func (c *cli) resume(args []string, f runFlags) (map[string]any, error) {
	st, err := openStore(f.dir)
	if err != nil {
		return nil, err
	}
	if err := admitModules(st, f.modules); err != nil {
		return nil, err
	}
	cp, err := readReceipt(args[0])
	if err != nil {
		return nil, err
	}
	m, err := manifestFor(st, cp, args[1:])
	if err != nil {
		return nil, err
	}
	if _, err := st.Put(store.Manifests, m.Value); err != nil {
		return nil, err
	}
	router, err := newRouter(st, f)
	if err != nil {
		return nil, err
	}
	host := &vm.Host{Store: st, Router: router}
	if err := extendHost(host, f); err != nil {
		return nil, err
	}
	rec, err := vm.Resume(cp, m, host)
	if err != nil {
		return nil, err
	}
	if f.dir != "" {
		if _, err := st.Put(store.Runs, rec); err != nil {
			return nil, err
		}
	}
	return rec, nil
}

// manifestFor reads the manifest file given, or the receipt's manifest
// from the store.
func manifestFor(st store.Store, rec map[string]any, file []string) (*manifest.Manifest, error) {
	if len(file) > 0 {
		return manifest.ReadFile(file[0])
	}
	d, _ := rec["manifestDigest"].(string)
	mv, err := store.Load(st, store.Manifests, d)
	if err != nil {
		return nil, err
	}
	return manifest.ParseValue(mv)
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

// extendHost adds what run and resume share beyond the plain executors:
// the approvals executor (--approvals), the mailbox host tools over the
// store directory (denied without --dir) and configured transports.
func extendHost(host *vm.Host, f runFlags) error {
	execs := host.Router.Executors()
	var front []effect.Executor
	if f.approvals != "" {
		front = append(front, gateApprovals{effect.NewApprovals(f.approvals)})
	}
	var svc *mailbox.Service
	if f.dir != "" {
		svc = mailbox.Open(f.dir)
	}
	router := effect.NewRouter(append(append(front, execs...), mailbox.NewTools(svc))...)
	router.Tools = host.Router.Tools
	host.Router = router
	if f.transportsFile != "" {
		t, err := bundle.LoadTransports(f.transportsFile)
		if err != nil {
			return err
		}
		host.Sources = t
	}
	return nil
}
