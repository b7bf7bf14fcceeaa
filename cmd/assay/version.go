package main

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/spf13/cobra"
)

// contracts are the ALGAL contracts this Assay implements.
var contracts = []string{"algal.organism.v1", "algal.expr.v1", "algal.run.v1", "algal.effect.v1", "algal.tool-effect.v1", "algal.bundle.v1", "algal.bench.v1", "algal.foundry.v1", "algal.search.v1", "algal.habitat-budget.v1", "algal.replay-comparison.v1"}

// version is stamped at release time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func newVersionCmd(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the Assay version and the contracts it implements",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			rev := "unknown"
			if bi, ok := debug.ReadBuildInfo(); ok {
				for _, s := range bi.Settings {
					if s.Key == "vcs.revision" {
						rev = s.Value
					}
				}
			}
			v := map[string]any{"version": version, "revision": rev, "contracts": canon.Strings(contracts)}
			return c.answer(v, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "assay %s (revision %s)\ncontracts: %s\n", version, rev, strings.Join(contracts, " "))
				return err
			})
		},
	}
}
