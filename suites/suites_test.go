package suites

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestSuites(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Assay workload suites")
}

// temps are removed after the suite.
var temps []string

var _ = AfterSuite(func() {
	for _, d := range temps {
		os.RemoveAll(d)
	}
})

// The workloads run while the spec tree is built, so every spec (one per
// contender and case, per gate rule) exists as data-driven, deterministic
// entries that JUnit and JSON reports can list.
var _ = Describe("Assay workloads", func() {
	roots := append([]string{"."}, harness.SplitList(os.Getenv("ASSAY_SUITES"))...)
	paths, err := harness.Discover(roots...)
	if err != nil {
		It("discovers workloads", func() { Fail(err.Error()) })
		return
	}
	storeDir, err := os.MkdirTemp("", "assay-suites-store-")
	if err != nil {
		It("creates a store", func() { Fail(err.Error()) })
		return
	}
	temps = append(temps, storeDir)
	out := os.Getenv("ASSAY_SUITES_OUT")
	if out == "" {
		if out, err = os.MkdirTemp("", "assay-suites-runs-"); err != nil {
			It("creates a runs directory", func() { Fail(err.Error()) })
			return
		}
		temps = append(temps, out)
	}
	wb, err := vm.NewWorkbench(storeDir)
	if err != nil {
		It("opens the workbench", func() { Fail(err.Error()) })
		return
	}
	if len(paths) == 0 {
		// An empty suite would report success having checked nothing.
		It("finds at least one workload", func() { Fail(fmt.Sprintf("no *.bench.yaml or *.foundry.yaml under %v", roots)) })
	}
	for _, p := range paths {
		describeWorkload(p, wb, out)
	}
})

// fileLabels labels a workload that did not load by what its file name
// says (name and kind), so --label-filter=<name> still selects, and fails
// on, a workload that is broken rather than silently matching nothing.
func fileLabels(path string) Labels {
	labels := Labels{"invalid"}
	kind, ok := harness.KindOf(path)
	if !ok {
		return labels
	}
	base := filepath.Base(path)
	name := strings.TrimSuffix(strings.TrimSuffix(base, harness.BenchSuffix), harness.FoundrySuffix)
	if labelSafe.MatchString(name) {
		labels = append(labels, name)
	}
	return append(labels, string(kind))
}

var labelSafe = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

func describeWorkload(path string, wb *vm.Workbench, out string) {
	w, err := harness.Load(path)
	if err != nil {
		Describe(path, fileLabels(path), func() {
			It("loads", func() { Fail(err.Error()) })
		})
		return
	}
	o, runErr := harness.Run(context.Background(), w, harness.Options{Runner: wb, Store: wb, Out: out})
	Describe(fmt.Sprintf("%s %s", w.Kind, w.Name), Label(w.Name, string(w.Kind)), func() {
		It("runs to completion", Label("run"), func() {
			Expect(runErr).NotTo(HaveOccurred(), "%s: the run did not complete", path)
			AddReportEntry("run directory", o.RunDir)
			Expect(o.Status).To(Equal("complete"))
		})
		if o == nil {
			return
		}
		for _, warn := range o.Warnings {
			It("warns: "+warn, Label("warning"), func() { AddReportEntry("warning", warn) })
		}
		if o.Bench != nil {
			describeBench(o)
		}
		if o.Foundry != nil {
			describeFoundry(o)
		}
		if o.Verification != nil {
			v := o.Verification
			It("verifies the report and every receipt", Label("verify"), func() {
				AddReportEntry("checked receipts", v.CheckedReceipts)
				if !v.OK {
					Fail(fmt.Sprintf("verification of %s failed:\n%s", o.RunDir, strings.Join(v.Mismatches, "\n")))
				}
			})
		}
		for _, g := range o.Gates {
			It("gate: "+g.Rule.Name(), Label("gate"), func() {
				AddReportEntry("verdict", g.Message)
				if !g.Passed {
					Fail(g.Message)
				}
			})
		}
	})
}

// outcomeRule finds the gate's expected outcome for a case, if any.
func outcomeRule(o *harness.Outcome, system, caseID string) (string, bool) {
	for _, r := range o.Workload.Gate.Rules {
		if r.Kind == harness.RuleOutcomes && r.System == system && r.Case == caseID {
			return r.Text, true
		}
	}
	return "", false
}

func word(passed bool) string {
	if passed {
		return "passed"
	}
	return "failed"
}

func describeBench(o *harness.Outcome) {
	r := o.Bench
	for i := range r.Systems {
		s := &r.Systems[i]
		Describe("system "+s.ID, Label("system"), func() {
			It(fmt.Sprintf("measured %d/%d passed", s.Passed, s.Total), Label("aggregate"), func() {
				AddReportEntry("tokens", fmt.Sprintf("%d in, %d out", s.Usage.TokensIn, s.Usage.TokensOut))
				AddReportEntry("cost", fmt.Sprintf("$%.6f", s.Usage.Cost))
				AddReportEntry("effect calls", s.EffectCalls)
				Expect(s.Total).To(BeEquivalentTo(len(r.Cases)))
			})
			for j := range s.Cases {
				c := &s.Cases[j]
				It(fmt.Sprintf("case %s %s", c.ID, word(c.Passed)), Label("case", word(c.Passed)), func() {
					AddReportEntry("outcome", fmt.Sprintf("%s; expected %v; got %v; receipt %s", c.Outcome, c.Expect, c.Outputs, c.ReceiptDigest))
					Expect(c.ReceiptDigest).To(HavePrefix("sha256:"))
					if want, ok := outcomeRule(o, s.ID, c.ID); ok {
						Expect(word(c.Passed)).To(Equal(word(want == "pass")), "the gate expects case %s to %s", c.ID, want)
					}
				})
			}
		})
	}
}

func describeFoundry(o *harness.Outcome) {
	res := o.Foundry
	if res.Report == nil {
		It("stays within the habitat budget", Label("budget"), func() {
			Fail("the habitat budget was exhausted before a candidate was promoted; see budget.json in " + o.RunDir)
		})
		return
	}
	r := res.Report
	for i := range r.Candidates {
		c := &r.Candidates[i]
		promoted := c.ManifestDigest == r.Promoted
		title := "candidate " + c.ManifestKey
		if promoted {
			title += " (promoted)"
		}
		Describe(title, Label("candidate"), func() {
			It(fmt.Sprintf("validation %d/%d, train %d/%d", c.Validation.Passed, c.Validation.Total, c.Train.Passed, c.Train.Total), Label("aggregate"), func() {
				AddReportEntry("tokens", fmt.Sprintf("%d in, %d out", c.Usage.TokensIn, c.Usage.TokensOut))
				AddReportEntry("agent calls", c.Work.AgentCalls)
				Expect(c.Validation.Total + c.Train.Total).To(BeEquivalentTo(len(c.Cases)))
			})
			for j := range c.Cases {
				cs := &c.Cases[j]
				It(fmt.Sprintf("%s case %s %s", cs.Split, cs.ID, word(cs.Passed)), Label("case", word(cs.Passed)), func() {
					AddReportEntry("outcome", fmt.Sprintf("%s; expected %v; got %v; receipt %s", cs.Outcome, cs.Expect, cs.Outputs, cs.ReceiptDigest))
					Expect(cs.ReceiptDigest).To(HavePrefix("sha256:"))
					if want, ok := outcomeRule(o, "", cs.ID); ok && promoted {
						Expect(word(cs.Passed)).To(Equal(word(want == "pass")), "the gate expects case %s to %s", cs.ID, want)
					}
				})
			}
		})
	}
	Describe("holdout on the promoted candidate", Label("holdout"), func() {
		for j := range r.Holdout.Cases {
			cs := &r.Holdout.Cases[j]
			It(fmt.Sprintf("holdout case %s %s", cs.ID, word(cs.Passed)), Label("case", word(cs.Passed)), func() {
				AddReportEntry("outcome", fmt.Sprintf("%s; expected %v; got %v; receipt %s", cs.Outcome, cs.Expect, cs.Outputs, cs.ReceiptDigest))
				Expect(cs.ReceiptDigest).To(HavePrefix("sha256:"))
				if want, ok := outcomeRule(o, "", cs.ID); ok {
					Expect(word(cs.Passed)).To(Equal(word(want == "pass")), "the gate expects case %s to %s", cs.ID, want)
				}
			})
		}
	})
}
