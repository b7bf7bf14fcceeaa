package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/harness/gate"
	"github.com/algal-assay/assay/harness/rundir"
)

// A newcomer breaks a fixture by changing one expectation: the gate must
// fail and say which system, how many cases, which case and where the rule
// lives.
func TestBrokenFixtureGateMessage(t *testing.T) {
	t.Parallel()
	old := `args: { ticket: "I was charged twice for my March invoice, please refund one." }
    expect: { queue: billing }`
	var body string
	p := copyFixture(t, "ticket-triage.bench.yaml", func(src string) string {
		if !strings.Contains(src, old) {
			t.Fatal("fixture changed; update the test")
		}
		body = strings.Replace(src, old, strings.Replace(old, "queue: billing", "queue: account", 1), 1)
		return body
	})
	o, _ := runWorkloadFile(t, p, 0)
	if o.Passed() || !o.Verification.OK {
		t.Fatalf("a broken expectation must fail the gate, not the evidence (verified %v)", o.Verification.OK)
	}
	var failed []gate.Result
	for _, g := range o.Gates {
		if !g.Passed {
			failed = append(failed, g)
		}
	}
	if len(failed) != 3 {
		t.Fatalf("want the three min-passed rules to fail, got %d: %+v", len(failed), failed)
	}
	// The message points at the rule's line in the copied file.
	line := 1 + strings.Count(body[:strings.Index(body, "    frontier-single: 6")], "\n")
	msg := failed[0].Message
	for _, part := range []string{
		`system "frontier-single" passed 5 of 6 cases`,
		"requires at least 6",
		fmt.Sprintf("%s:%d:5", p, line),
		`double-charge (outcome complete, expected {"queue":"account"}, got {"queue":"billing"})`,
	} {
		if !strings.Contains(msg, part) {
			t.Errorf("message %q\nlacks %q", msg, part)
		}
	}
	summary, _ := os.ReadFile(filepath.Join(o.RunDir, rundir.SummaryFile))
	if !strings.Contains(string(summary), "**FAIL** frontier-single passes at least 6 cases") {
		t.Errorf("summary.md does not show the failing rule:\n%s", summary)
	}
}

// A case that declares a response for a call it never makes shifts the
// queue onto the next case; verification must say so.
func TestMisdeclaredResponsesFailVerification(t *testing.T) {
	t.Parallel()
	p := copyFixture(t, "ticket-triage.bench.yaml", func(src string) string {
		return strings.Replace(src, "frontier: { route: billing }", "frontier: { route: billing, escalate: billing }", 1)
	})
	o, _ := runWorkloadFile(t, p, 0)
	if o.Verification.OK {
		t.Fatal("misaligned responses verified")
	}
	found := false
	for _, m := range o.Verification.Mismatches {
		if strings.Contains(m, `system "escalating", case "double-charge" declares 1 response(s) for cell "escalate" on executor "frontier" but made 0 such call(s)`) {
			found = true
		}
	}
	if !found {
		t.Fatalf("mismatches %v", o.Verification.Mismatches)
	}
}

// A deliberately malformed answer loads when it says so, and is served as
// written: the case then fails on the contract, as intended.
func TestMalformedTagKeepsTheAnswer(t *testing.T) {
	t.Parallel()
	manifest, err := filepath.Abs(filepath.Join("..", "fixtures", "triage", "triage-single.algal.json"))
	if err != nil {
		t.Fatal(err)
	}
	body := `name: tiny
revision: 2
systems:
  - id: one
    manifest: ` + manifest + `
    executors: { cheap: cases }
cases:
  - id: a
    args: { ticket: "x" }
    expect: { queue: billing }
    responses:
      cheap: { route: !malformed postive }
gate:
  outcomes: { one: { a: fail } }
`
	path := filepath.Join(t.TempDir(), "tiny.bench.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	w := loadWorkload(t, path)
	if r := w.Cases[0].Responses(); len(r) != 1 || len(r["cheap"]["route"]) != 1 || r["cheap"]["route"][0] != "postive" {
		t.Fatalf("responses %+v", r)
	}
	o, _ := runOnTestBench(t, w, 0)
	if !o.Passed() || o.Bench.Systems[0].Cases[0].Passed {
		t.Fatalf("the malformed answer must fail its case and the gate that expects it (passed %v)", o.Passed())
	}
}
