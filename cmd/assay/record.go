package main

import (
	"github.com/algal-assay/assay/harness/rundoc"
	"github.com/algal-assay/assay/runrecord"
	"github.com/spf13/cobra"
)

// maxAssemblyArg bounds the --assembly file.
const maxAssemblyArg = 4 << 20

func newRecordCmd(c *cli) *cobra.Command {
	record := &cobra.Command{
		Use:   "record",
		Short: "Inspect a run directory's foundry-run.yml",
	}
	var asJSON bool
	var pipeline, assemblyPath string
	var workloads []string
	show := &cobra.Command{
		Use:   "show RUN_DIR",
		Short: "Show a run record: pipeline, status, phases, which phase last wrote each file",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			opts := runrecord.Options{Pipeline: pipeline}
			known, err := rundoc.Assemblies(workloads, c.stderr)
			if err != nil {
				return err
			}
			opts.Workloads = known
			if assemblyPath != "" {
				data, err := c.readAll(assemblyPath, maxAssemblyArg)
				if err != nil {
					return usagef("--assembly %s: %v", assemblyPath, err)
				}
				w, err := rundoc.AssemblyWorkload(data, pipeline)
				if err != nil {
					return usagef("--assembly %s: %v", assemblyPath, err)
				}
				opts.Workloads = append(opts.Workloads, w)
			}
			v, err := runrecord.Read(args[0], opts)
			if err != nil {
				return err
			}
			if asJSON {
				if err := c.emit(v.Value(), ""); err != nil {
					return err
				}
			} else if err := v.WriteText(c.stdout, rundoc.GateVerdict(v.Dir)); err != nil {
				return err
			}
			if v.State != runrecord.StateRecord {
				return reported(v.Problem)
			}
			return nil
		},
	}
	show.Flags().BoolVar(&asJSON, "json", false, "print the view as canonical JSON")
	show.Flags().StringVar(&pipeline, "pipeline", "", "read the record against this pipeline's workload")
	show.Flags().StringVar(&assemblyPath, "assembly", "", "today's _assembly.json for the workload (or - for stdin)")
	show.Flags().StringSliceVar(&workloads, "workloads", nil, "workload files or directories giving today's assemblies (default suites/ when it exists)")
	record.AddCommand(show)
	return record
}
