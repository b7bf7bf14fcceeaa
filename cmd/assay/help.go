package main

import (
	"strings"

	"github.com/spf13/cobra"
)

// The help's groups, from a first run to the store, and which top-level
// verb sits in which: `assay --help` is read top to bottom by someone who
// has not used Assay yet.
var helpGroups = []struct {
	id, title string
	verbs     []string
}{
	{"start", "Getting started:", []string{"init", "run", "check", "explain", "version"}},
	{"workloads", "Workloads and CI:", []string{"workloads", "bench", "foundry", "suite", "record", "ci"}},
	{"organisms", "Organisms and receipts:", []string{"verify", "resume", "replay", "inspect", "diff", "digest", "canon", "pack", "unpack", "bundle", "call", "tool-def", "expr", "mailbox"}},
	{"store", "The store (--dir, default .algal):", []string{"runs", "manifests", "manifest", "store", "slots", "slot"}},
}

// examples is every verb's Example, by command path without "assay ".
// A test requires one for every verb, so a new verb comes with its own.
var examples = map[string]string{
	"":          "assay init && go mod tidy && go tool assay run\nassay run suites/ticket-triage.bench.yaml\nassay check organisms/triage.algal.json",
	"init":      "assay init            # scaffold into this directory\nassay init my-organisms --module example.com/my-organisms",
	"run":       "assay run                                   # every workload under suites/\nassay run suites/ticket-triage.bench.yaml   # one workload\nassay run organisms/triage.algal.json --args args.json   # one manifest, prints its receipt",
	"check":     "assay check organisms/triage.algal.json\ncat triage.algal.json | assay check -",
	"explain":   "assay explain organisms/triage.algal.json",
	"version":   "assay version\nassay version --json",
	"workloads": "assay workloads run suites/",
	"workloads run": "assay workloads run                 # every workload under suites/\n" +
		"assay workloads run suites/ --json --junit junit.xml",
	"bench":                  "assay bench bench.config.json --dir .algal --out bench-report.json",
	"bench verify":           "assay bench verify bench-report.json --dir .algal",
	"bench inspect":          "assay bench inspect bench-report.json\nassay bench inspect runs/ticket-triage/<run-slug>",
	"foundry":                "assay foundry foundry.config.json --dir .algal --out foundry-report.json",
	"foundry verify":         "assay foundry verify foundry-report.json --dir .algal",
	"foundry inspect":        "assay foundry inspect foundry-report.json\nassay foundry inspect runs/intent-select/<run-slug>",
	"foundry pack":           "assay foundry pack foundry-report.json --dir .algal --out bundles",
	"foundry export":         "assay foundry export foundry-report.json --dir .algal --out promoted.bundle.json",
	"foundry search":         "assay foundry search search.config.json --dir .algal --out search-report.json",
	"foundry search-verify":  "assay foundry search-verify search-report.json --dir .algal",
	"foundry search-inspect": "assay foundry search-inspect search-report.json",
	"foundry search-pack":    "assay foundry search-pack search-report.json --dir .algal --out bundles",
	"suite":                  "assay suite --examples examples",
	"record":                 "assay record show runs/ticket-triage/<run-slug>",
	"record show":            "assay record show runs/ticket-triage/<run-slug>\nassay record show runs/ticket-triage/<run-slug> --json",
	"ci":                     "assay ci pr --base-ref origin/main",
	"ci verify":              "assay ci verify runs --dir .algal",
	"ci diff":                "assay ci diff --base-ref origin/main\nassay ci diff --base base-runs --head runs --format json",
	"ci pr":                  "assay ci pr --base-ref origin/main --artifact out/assay-pr-check",
	"ci comment":             "assay ci comment --from-artifact out/assay-pr-check --repo OWNER/NAME --pr 42",
	"ci merge":               "assay ci merge shard-1 shard-2 --out runs",
	"verify":                 "assay verify receipt.json organisms/triage.algal.json\nassay verify receipt.json --dir .algal",
	"resume":                 "assay resume receipt.json organisms/triage.algal.json --approvals approvals.json",
	"replay":                 "assay replay receipt.json --with organisms/triage-v2.algal.json",
	"inspect":                "assay inspect receipt.json\nassay inspect sha256:<digest>   # a receipt in the store (--dir)",
	"diff":                   "assay diff receipt-a.json receipt-b.json",
	"digest":                 "assay digest organisms/triage.algal.json",
	"canon":                  "assay canon report.json\necho '{\"b\":1,\"a\":2}' | assay canon -",
	"pack":                   "assay pack organisms/triage.algal.json --out bundles",
	"unpack":                 "assay unpack bundles/<hex>.bundle.json --dir .algal",
	"bundle":                 "assay bundle pack organisms/triage.algal.json",
	"bundle pack":            "assay bundle pack organisms/triage.algal.json --out bundles",
	"bundle unpack":          "assay bundle unpack bundles/<hex>.bundle.json --dir .algal",
	"call":                   "assay call bundles/<hex>.bundle.json --args args.json",
	"tool-def":               "assay tool-def organisms/triage.algal.json\nassay tool-def organisms/triage.algal.json --format anthropic",
	"expr":                   "assay expr eval --program '[\"add\",1,2]'",
	"expr eval":              "assay expr eval --program '[\"add\",[\"var\",\"x\"],1]' --env '{\"x\":41}'",
	"expr check":             "assay expr check --program '[\"eq\",[\"var\",\"label\"],\"billing\"]' --names label",
	"expr ops":               "assay expr ops\nassay expr ops --markdown",
	"mailbox":                "assay mailbox create inbox --dir .algal",
	"mailbox create":         "assay mailbox create inbox --dir .algal",
	"mailbox send":           "assay mailbox send <send-cap> message.json --dir .algal",
	"mailbox receive":        "assay mailbox receive <receive-cap> --dir .algal",
	"mailbox list":           "assay mailbox list --dir .algal",
	"mailbox revoke":         "assay mailbox revoke <handle> --dir .algal",
	"runs":                   "assay runs --dir .algal",
	"manifests":              "assay manifests --dir .algal",
	"manifest":               "assay manifest sha256:<digest> --dir .algal",
	"store":                  "assay store put value.json --dir .algal",
	"store put":              "assay store put value.json --dir .algal\necho '{\"a\":1}' | assay store put -",
	"store get":              "assay store get sha256:<digest> --dir .algal",
	"store has":              "assay store has sha256:<digest> --dir .algal",
	"slots":                  "assay slots --dir .algal",
	"slot":                   "assay slot get production --dir .algal",
	"slot get":               "assay slot get production --dir .algal",
	"slot set":               "assay slot set production pointer.json --dir .algal",
}

// organizeHelp puts the top-level verbs in their groups and gives every
// verb its example, indented as cobra prints examples.
func organizeHelp(root *cobra.Command) {
	for _, g := range helpGroups {
		root.AddGroup(&cobra.Group{ID: g.id, Title: g.title})
		for _, v := range g.verbs {
			if cmd, _, err := root.Find([]string{v}); err == nil && cmd != root {
				cmd.GroupID = g.id
			}
		}
	}
	root.AddGroup(&cobra.Group{ID: "help", Title: "Help:"})
	root.SetHelpCommandGroupID("help")
	root.SetCompletionCommandGroupID("help")
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		key := strings.TrimPrefix(strings.TrimPrefix(cmd.CommandPath(), root.Name()), " ")
		if ex, ok := examples[key]; ok && cmd.Example == "" {
			cmd.Example = "  " + strings.ReplaceAll(ex, "\n", "\n  ")
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
