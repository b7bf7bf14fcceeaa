package main

import (
	"context"
	"fmt"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/spf13/cobra"
)

type replayFlags struct {
	with, args, responses, tools, modules, dir, out, transports string
	write                                                       bool
}

func newReplayCmd(c *cli) *cobra.Command {
	var f replayFlags
	cmd := &cobra.Command{
		Use:   "replay RECEIPT --with MANIFEST",
		Short: "Replay a revised manifest against a recorded run (algal.replay-comparison.v1)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if f.with == "" {
				return usagef("replay: --with MANIFEST is required")
			}
			if f.write && f.dir == "" {
				return usagef("replay: --write needs --dir STORE to write into")
			}
			return c.replay(args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.with, "with", "", "revised manifest `FILE`")
	fl.StringVar(&f.args, "args", "", "args `FILE` merged over the recorded args")
	fl.StringVar(&f.responses, "responses", "", "scripted responses `FILE` for unrecorded requests")
	fl.StringVar(&f.tools, "tools", "", "host tool registry `FILE` (signatures only)")
	fl.StringVar(&f.modules, "modules", "", "`DIR` of *.algal.json modules to admit first")
	fl.StringVar(&f.dir, "dir", store.DefaultDir, "file store `DIR`")
	fl.StringVar(&f.transports, "transports", "", "transports `FILE`: fetch missing closures into the overlay first")
	fl.BoolVar(&f.write, "write", false, "persist the revised receipt into --dir")
	fl.StringVar(&f.out, "out", "", "also write the comparison record to `FILE`")
	return cmd
}

func (c *cli) replay(path string, f replayFlags) error {
	cmp, err := vm.ReplayFiles{Dir: f.dir, Modules: f.modules, Receipt: path, With: f.with, Args: f.args, Stdin: c.stdin,
		Responses: f.responses, Tools: f.tools, Transports: f.transports, Write: f.write}.Replay(context.Background())
	if err != nil {
		return err
	}
	if err := c.printComparison(cmp, f.out); err != nil {
		return err
	}
	if cmp.Verdict == vm.VerdictCouldNotReplay {
		return reported(fmt.Errorf("could not replay: %s", cmp.Reason.Code))
	}
	return nil
}

// printComparison prints the comparison record (and writes it with
// --out); on a terminal a person reads sentences, and --out still
// receives upstream's bytes.
func (c *cli) printComparison(cmp *vm.Comparison, out string) error {
	if !c.readable() {
		return c.emit(cmp.Value(), out)
	}
	if out != "" {
		b, err := canon.Encode(cmp.Value())
		if err != nil {
			return err
		}
		if err := writeOut(out, b); err != nil {
			return err
		}
	}
	_, err := fmt.Fprint(c.stdout, cmp.Readable())
	return err
}
