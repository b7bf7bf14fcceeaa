package main

import "github.com/spf13/cobra"

// newRoot builds the whole command tree. Each verb's implementation lives
// in its own file; this is the one place that shows which verbs exist.
//
//	assay check MANIFEST            admit a manifest (manifestDigest, cells)
//	assay init [DIR]                scaffold organisms, workloads, suite, workflows
//	assay run MANIFEST | PATH...    run a manifest (receipt) or YAML workloads
//	assay workloads run [PATH...]   the YAML workloads alone
//	assay verify RECEIPT [MANIFEST] replay a receipt offline
//	assay resume RECEIPT [MANIFEST] continue a suspended run
//	assay replay RECEIPT --with M   revised manifest against a recorded run
//	assay suite                     run and verify every example of a directory
//	assay bench CONFIG              verify | inspect
//	assay foundry CONFIG            verify | inspect | pack | export | search |
//	                                search-verify | search-inspect | search-pack
//	assay pack MANIFEST, unpack B   algal.bundle.v1 closures (also: assay bundle)
//	assay digest MANIFEST, canon F  manifest digest, canonical JSON
//	assay mailbox                   create | send | receive | list | revoke
//	assay call BUNDLE               run a bundle, print a short result
//	assay explain MANIFEST          every cell's resolved ports, every edge
//	assay tool-def MANIFEST         an OpenAI or Anthropic tool definition
//	assay inspect R, diff A B       summarize a receipt, compare two
//	assay runs, manifests, manifest D, store put|get|has, slots, slot get|set
//	                                the store under --dir
//	assay record                    show foundry-run.yml records
//	assay expr                      eval | check | ops (algal.expr.v1)
//	assay ci                        verify | diff | pr | comment (the PR check)
//	assay version
func newRoot(c *cli) *cobra.Command {
	root := &cobra.Command{
		Use:           "assay",
		Short:         "Test, measure and gate ALGAL organisms",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(c.stdin)
	root.SetOut(c.stdout)
	root.SetErr(c.stderr)
	root.PersistentFlags().BoolVar(&c.json, "json", false, "print JSON even on a terminal (JSON is the default when stdout is not a terminal)")
	root.AddCommand(
		newInitCmd(c),
		newCheckCmd(c),
		newRunCmd(c),
		newWorkloadsCmd(c),
		newVerifyCmd(c),
		newResumeCmd(c),
		newReplayCmd(c),
		newSuiteCmd(c),
		newBenchCmd(c),
		newFoundryCmd(c),
		newPackCmd(c),
		newUnpackCmd(c),
		newBundleCmd(c),
		newDigestCmd(c),
		newCanonCmd(c),
		newMailboxCmd(c),
		newCallCmd(c),
		newExplainCmd(c),
		newToolDefCmd(c),
		newInspectCmd(c),
		newDiffCmd(c),
		newRunsCmd(c),
		newManifestsCmd(c),
		newManifestCmd(c),
		newStoreCmd(c),
		newSlotsCmd(c),
		newSlotCmd(c),
		newRecordCmd(c),
		newExprCmd(c),
		newCICmd(c),
		newVersionCmd(c),
	)
	organizeHelp(root) // help.go: groups and an example on every verb
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err.Error()} })
	return root
}

// newCICmd groups the PR check's verbs; each lives in its ci_*.go file.
func newCICmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ci",
		Short: "Continuous-integration helpers (the PR check)",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newCIVerifyCmd(c), newCIDiffCmd(c), newCIPRCmd(c), newCICommentCmd(c), newCIMergeCmd(c))
	return cmd
}
