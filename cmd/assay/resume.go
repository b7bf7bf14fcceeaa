package main

import (
	"github.com/algal-assay/assay/engine/execset"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/receipt"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness/liverun"
	"github.com/spf13/cobra"
)

func newResumeCmd(c *cli) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "resume RECEIPT [MANIFEST]",
		Short: "Continue a suspended run: replay its completed prefix, re-issue the suspended request",
		Args:  cobra.RangeArgs(1, 2),
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
	cp, err := receipt.ReadFile(args[0])
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
	rec, err := c.runHosted(cmd, args, f, st, m, "resume", nil, func(host *vm.Host) (map[string]any, string, error) {
		rec, err := vm.Resume(cp, m, host)
		from, _ := cp["digest"].(string)
		return rec, "from " + from, err
	})
	if err != nil {
		return nil, "", err
	}
	return c.persistReceipt(st, rec, f)
}

// runHosted runs m over st on the host the flags build (approvals,
// executors, mailboxes when the run persists, the NAME=DIR transports),
// the live answers recorded as verb's (run, resume, call).
func (c *cli) runHosted(cmd *cobra.Command, args []string, f runFlags, st store.Store, m *manifest.Manifest, verb string,
	transports []string, start liverun.Start) (map[string]any, error) {
	a, err := f.live.answerer(c, cmd, args)
	if err != nil {
		return nil, err
	}
	opts := execset.HostOptions{Approvals: f.approvals, TransportDirs: transports}
	if f.persists() {
		opts.Mailboxes = f.dir
	}
	return liverun.RunHosted(a, f.set(), opts, st, m, verb, start)
}
