package main

import (
	"os"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/receipt"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/spf13/cobra"
)

type runFlags struct {
	args, responses, executorCmd, tools, modules, dir, out string
	cacheEffects, strictSplits                             bool
	concurrency                                            int
	transports                                             []string
	// transportsFile (--transports) and approvals (--approvals) are shared
	// with resume.
	transportsFile, approvals string
	report                    workloadReport
}

func init() {
	register(func(c *cli) *cobra.Command {
		var f runFlags
		cmd := &cobra.Command{
			Use:   "run [MANIFEST.json | PATH...]",
			Short: "Run one organism manifest, or the YAML workloads under PATHs (default suites/)",
			Long: "With one *.json argument: run an algal.organism.v1 manifest and print the sealed receipt as\n" +
				"canonical JSON, exiting 0 whenever the run produced a receipt, whatever its outcome.\n" +
				"Otherwise: the main job, as `assay workloads run` (every *.bench.yaml and *.foundry.yaml under\n" +
				"the paths, default suites/; --dir defaults to .algal and --out names the runs root, default runs).\n" +
				"--args FILE       run arguments {\"<input cell>\":{\"<port>\":value}}\n" +
				"--responses FILE  scripted executor table (id \"scripted\")\n" +
				"--executor-cmd C  command executor (sh -c C; canonical request on stdin)\n" +
				"--tools FILE      host tool registry\n" +
				"--modules DIR     admit every *.algal.json in DIR into the store first\n" +
				"--dir STORE       file store (manifest, values, slots, memo, receipt); default in-memory\n" +
				"--cache-effects   serve and fill the store's effect memo index\n" +
				"--transport N=DIR bundle directory serving organism cells that declare via:N (repeatable)\n" +
				"--transports FILE JSON object of transport name -> directory or http(s) URL\n" +
				"                  (or {\"source\",\"timeoutMs\"}); consulted only on a local miss\n" +
				"--approvals FILE  gate decisions {\"<gate cell id>\":\"<label>\"} served ahead of fixtures;\n" +
				"                  a gate absent from the file suspends the run (resume it later)\n" +
				"With --dir, the mailbox.send.v1/mailbox.receive.v1 host tools use the store's mailboxes.\n" +
				"--out FILE        also write the receipt to FILE",
			Args: cobra.ArbitraryArgs,
			RunE: func(_ *cobra.Command, args []string) error {
				if len(args) != 1 || !strings.HasSuffix(args[0], ".json") {
					wf := workloadFlags{dir: f.dir, out: f.out, concurrency: f.concurrency, strictSplits: f.strictSplits, report: f.report}
					if wf.dir == "" {
						wf.dir = ".algal"
					}
					if wf.out == "" {
						wf.out = "runs"
					}
					return runWorkloads(c, args, wf)
				}
				rec, err := c.runManifest(args[0], f)
				if err != nil {
					return err
				}
				b, err := canon.Encode(rec)
				if err != nil {
					return err
				}
				b = append(b, '\n')
				if f.out != "" {
					if err := os.WriteFile(f.out, b, 0o644); err != nil {
						return &fault.Error{Code: "IO_FAILED", Message: err.Error()}
					}
				}
				_, err = c.stdout.Write(b)
				return err
			},
		}
		fl := cmd.Flags()
		fl.StringVar(&f.args, "args", "", "run arguments JSON file")
		fl.StringVar(&f.responses, "responses", "", "scripted responses JSON file")
		fl.StringVar(&f.executorCmd, "executor-cmd", "", "command executor (sh -c)")
		fl.StringVar(&f.tools, "tools", "", "host tool registry JSON file")
		fl.StringVar(&f.modules, "modules", "", "directory of *.algal.json modules to admit first")
		fl.StringVar(&f.dir, "dir", "", "file store directory")
		fl.BoolVar(&f.cacheEffects, "cache-effects", false, "consult and fill the effect memo index")
		fl.StringVar(&f.out, "out", "", "also write the receipt to this file")
		fl.StringArrayVar(&f.transports, "transport", nil, "NAME=DIR bundle transport (repeatable)")
		fl.StringVar(&f.transportsFile, "transports", "", "transports JSON file (name -> directory or URL)")
		fl.StringVar(&f.approvals, "approvals", "", "gate approvals JSON file")
		fl.IntVar(&f.concurrency, "concurrency", 0, "workloads: cases in flight (0: one per CPU, at least two)")
		fl.BoolVar(&f.strictSplits, "strict-splits", false, "workloads: reject foundry workloads whose splits share identical args")
		addWorkloadReportFlags(fl, &f.report)
		return cmd
	})
}

// openStore opens the --dir file store, or a memory store without one.
func openStore(dir string) (store.Store, error) {
	if dir == "" {
		return store.NewMemStore(), nil
	}
	return store.OpenFileStore(dir)
}

// readReceipt reads a receipt file: a bounded regular file holding one
// JSON object.
func readReceipt(path string) (map[string]any, error) {
	v, err := canon.ReadFile(path, receipt.MaxBytes)
	if err != nil {
		return nil, err
	}
	rec, ok := v.(map[string]any)
	if !ok {
		return nil, &fault.Error{Code: fault.Parse, Message: path + ": receipt must be an object"}
	}
	return rec, nil
}

// readArgs reads a run-arguments file: a JSON object of at most
// receipt.MaxArgsBytes.
func readArgs(path string) (map[string]any, error) {
	v, err := canon.ReadFile(path, receipt.MaxArgsBytes)
	if err != nil {
		return nil, err
	}
	a, ok := v.(map[string]any)
	if !ok {
		return nil, &fault.Error{Code: fault.Parse, Message: path + ": args must be an object"}
	}
	return a, nil
}

// newRouter admits the executors run and resume share: --responses (id
// "scripted"), --executor-cmd (id "command"), each wrapped with the memo
// index under --cache-effects, and the --tools registry.
func newRouter(st store.Store, f runFlags) (*effect.Router, error) {
	var execs []effect.Executor
	if f.responses != "" {
		s, err := effect.LoadScripted("scripted", f.responses)
		if err != nil {
			return nil, err
		}
		execs = append(execs, s)
	}
	if f.executorCmd != "" {
		wd, _ := os.Getwd()
		cmd, err := effect.NewCommand("command", f.executorCmd, wd, effect.DefaultCommandTimeout)
		if err != nil {
			return nil, err
		}
		execs = append(execs, cmd)
	}
	if f.cacheEffects {
		for i, ex := range execs {
			cached := effect.NewCached(ex, st)
			cached.Accept = vm.AcceptOutput
			execs[i] = cached
		}
	}
	router := effect.NewRouter(execs...)
	if f.tools != "" {
		tools, err := effect.LoadTools(f.tools)
		if err != nil {
			return nil, err
		}
		router.Tools = tools
	}
	return router, nil
}

// admitModules puts every *.algal.json in dir (if any) into st.
func admitModules(st store.Store, dir string) error {
	if dir == "" {
		return nil
	}
	return vm.AdmitModules(st, dir)
}

func (c *cli) runManifest(path string, f runFlags) (map[string]any, error) {
	st, err := openStore(f.dir)
	if err != nil {
		return nil, err
	}
	if err := admitModules(st, f.modules); err != nil {
		return nil, err
	}
	m, err := manifest.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if _, err := st.Put(store.Manifests, m.Value); err != nil {
		return nil, err
	}
	args := map[string]any{}
	if f.args != "" {
		if args, err = readArgs(f.args); err != nil {
			return nil, err
		}
	}
	router, err := newRouter(st, f)
	if err != nil {
		return nil, err
	}
	host := &vm.Host{Store: st, Router: router}
	if err := extendHost(host, f); err != nil {
		return nil, err
	}
	for _, t := range f.transports {
		name, dir, ok := strings.Cut(t, "=")
		if !ok || name == "" || dir == "" || strings.Contains(dir, "://") {
			return nil, usagef("--transport wants NAME=DIR (a local bundle directory), got %q", t)
		}
		if host.Transports == nil {
			host.Transports = map[string]string{}
		}
		host.Transports[name] = dir
	}
	rec, err := vm.Run(m, args, host)
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
