package diff_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/ci/diff"
	ghci "github.com/algal-assay/assay/ci/github"
	"github.com/algal-assay/assay/engine/golden"
)

// Golden comments for what a reviewer asks first: why a system left the
// Pareto set, why a candidate ranks where it does, which receipts changed
// behaviour and which only their work accounting, what got more
// expensive, and which holdout cases fail now.

var why = diff.RenderOptions{Pointer: pointer, Command: "assay ci pr --base-ref main",
	BlobBase: "https://github.com/example/assay-demo/blob/0123456789abcdef0123456789abcdef01234567/",
	Drawn:    "`pr.html` in the `assay-pr-check` artifact of [the check run](https://github.com/example/assay-demo/actions/runs/42)"}

// Small and large now both answer every validation case and miss the same
// train case; the cascade's screen misreads a validation case. Small and
// large tie on validation, train and agent calls, and one work unit (a
// one-character shorter wrong answer) promotes large. Large then misses a
// holdout case the cascade passed.
func TestGoldenWorkTieBreak(t *testing.T) {
	t.Parallel()
	const f = "suites/intent-select.foundry.yaml"
	d, _ := headDiff(t, false,
		edit{f, "small: { intent: how-to, screen: how-to }\n      large: { intent: how-to }", "small: { intent: refund, screen: how-to }\n      large: { intent: other }"},
		edit{f, "small: { intent: bug, screen: unsure }", "small: { intent: refund, screen: unsure }"},
		edit{f, "small: { intent: other, screen: other }\n      large: { intent: how-to }", "small: { intent: other, screen: how-to }\n      large: { intent: other }"},
		edit{f, "small: { intent: how-to, screen: unsure }\n      large: { intent: bug, escalate: bug }\n  - id: ho-rebilled", "small: { intent: bug, screen: unsure }\n      large: { intent: bug, escalate: bug }\n  - id: ho-rebilled"},
		edit{f, "large: { intent: bug, escalate: bug }\n\ngate", "large: { intent: how-to, escalate: bug }\n\ngate"})

	fd := find(t, d, "intent-select").Foundry
	if !fd.PromotedChanged || fd.Head.Key != "organism:assay-intent-large" {
		t.Fatalf("promotion %+v -> %+v", fd.Base, fd.Head)
	}
	top := fd.HeadRanking[0]
	if top.DecidedBy != "work units" || fd.HeadRanking[1].Units-top.Units != 1 {
		t.Fatalf("head ranking %+v: want large above small by one work unit", fd.HeadRanking)
	}
	var holdout *diff.Regression
	for _, r := range d.Regressions {
		if r.Metric == "holdout" {
			holdout = r
		}
	}
	if holdout == nil || strings.Join(holdout.Cases, ",") != "ho-paste-freeze" {
		t.Fatalf("holdout regression %+v: want ho-paste-freeze named", holdout)
	}
	md := diff.Markdown(d, why)
	for _, want := range []string{"**4736**", "**4737**", "fewer work units 4736 < 4737", "ho-paste-freeze"} {
		if !strings.Contains(md, strings.ReplaceAll(want, "<", "&lt;")) {
			t.Errorf("comment lacks %q", want)
		}
	}
	checkGolden(t, "tiebreak", md)
}

// Two organisms revised at once: the triage escalation's guard becomes an
// equivalent expression (it now burns fuel: work accounting only), and
// the intent cascade's guard tests for a label the screen never gives (it
// never escalates: a behaviour divergence).
func TestGoldenWorkOnlyReplay(t *testing.T) {
	t.Parallel()
	d, n := headDiff(t, true,
		edit{"fixtures/triage/triage-escalating.algal.json", `"guard": { "equals": "unsure" }`,
			`"guard": { "expr": { "contract": "algal.expr.v1", "program": ["eq", ["get", "value"], "unsure"] } }`},
		edit{"fixtures/intent/intent-cascade.algal.json", "\"guard\": {\n        \"equals\": \"unsure\"\n      }",
			`"guard": { "expr": { "contract": "algal.expr.v1", "program": ["eq", ["get", "value"], "Unsure"] } }`})

	r := d.Replays
	if r == nil || r.Receipts != n {
		t.Fatalf("replays %+v", r)
	}
	kinds := map[string]map[string]int{}
	for _, x := range r.Results {
		if x.Workload == "" || x.Case == "" {
			t.Errorf("receipt %s is not labelled by its base case", x.File)
		}
		if kinds[x.Key] == nil {
			kinds[x.Key] = map[string]int{}
		}
		kinds[x.Key][x.Verdict+"/"+x.Divergence]++
	}
	if k := kinds["organism:assay-triage-escalating"]; k["diverged/work"] != 6 || len(k) != 1 {
		t.Errorf("triage escalation verdicts %v: want six work-only divergences", k)
	}
	if k := kinds["organism:assay-intent-cascade"]; k["diverged/cell"] == 0 || k["diverged/work"] == 0 {
		t.Errorf("cascade verdicts %v: want behaviour divergences beside work-only ones", k)
	}
	md := diff.Markdown(d, why)
	if !strings.Contains(md, "**Work accounting only**") || !strings.Contains(md, "diverged in behaviour") {
		t.Errorf("comment does not set work-only replays apart:\n%s", md)
	}
	checkGolden(t, "workonly", md)
}

// The cheap screen now doubts one more ticket, so the escalating circuit
// calls the frontier once more: same passes, higher cost and more calls,
// which the gate's call ceiling catches.
func TestGoldenCostRegression(t *testing.T) {
	t.Parallel()
	d, _ := headDiff(t, false,
		edit{"suites/ticket-triage.bench.yaml", "cheap: { route: account, screen: account }\n      frontier: { route: account }",
			"cheap: { route: account, screen: unsure }\n      frontier: { route: account, escalate: account }"})

	var got []string
	for _, r := range d.Regressions {
		if r.Amount != nil {
			got = append(got, r.Subject+" "+r.Metric)
		}
	}
	if strings.Join(got, ",") != "escalating cost,escalating calls" {
		t.Fatalf("amount regressions %v, want escalating cost then calls", got)
	}
	md := diff.Markdown(d, why)
	for _, want := range []string{"| escalating | cost | $0.001834 |", "| escalating | calls | 8 | 9 | +12.5% |"} {
		if !strings.Contains(md, want) {
			t.Errorf("comment lacks %q", want)
		}
	}
	if !strings.HasSuffix(strings.TrimSpace(md), "[the check run](https://github.com/example/assay-demo/actions/runs/42).") {
		t.Errorf("comment does not end with the reproduce line:\n%s", md[max(0, len(md)-600):])
	}
	checkGolden(t, "cost", md)

	// Cut to a fraction of its length, the comment still ends with the
	// reproduce line: it closes the truncation notice, whole.
	footer := diff.Footer(d, why)
	cut := ghci.Compose("<!-- assay:pr-check -->", diff.Sections(d, why), 1500, pointer+" "+footer)
	if ghci.Length(cut) > 1500 || !strings.Contains(cut, "**Report truncated**") || !strings.HasSuffix(cut, footer+"\n") {
		t.Errorf("cut comment does not end with the footer:\n%s", cut)
	}
}

// pr.html of a Pareto change and a promotion change at once: the golden
// file the browser test in report loads.
func TestGoldenPRHTML(t *testing.T) {
	t.Parallel()
	const tt = "suites/ticket-triage.bench.yaml"
	const is = "suites/intent-select.foundry.yaml"
	d, _ := headDiff(t, true,
		edit{tt, "frontier: { route: technical }", "frontier: { route: billing }"},
		edit{tt, "frontier: { route: account }", "frontier: { route: billing }"},
		edit{tt, "frontier: { route: technical, escalate: technical }", "frontier: { route: billing, escalate: technical }"},
		edit{tt, "cheap: { route: account, screen: account }", "cheap: { route: account, screen: unsure }"},
		edit{tt, "frontier: { route: billing }\n  - id: wrong-totals", "frontier: { route: billing, escalate: account }\n  - id: wrong-totals"},
		edit{is, "large: { intent: refund, escalate: refund }", "large: { intent: refund, escalate: bug }"},
		edit{is, "screen: other }\n      large: { intent: how-to }", "screen: other }\n      large: { intent: other }"},
		edit{"fixtures/triage/triage-escalating.algal.json", `"guard": { "equals": "unsure" }`,
			`"guard": { "expr": { "contract": "algal.expr.v1", "program": ["eq", ["get", "value"], "unsure"] } }`})
	// The job summary carries the comment's content and the plot, as a
	// table.
	summary := ghci.Compose("", diff.SummarySections(d, why), 1<<30, "")
	if !strings.Contains(summary, "## "+diff.TitlePlot) || !strings.Contains(summary, "Frontier at head, left to right: cheap-single") {
		t.Errorf("job summary lacks the plot:\n%s", summary)
	}
	checkGolden(t, "summary", summary)
	page, err := diff.HTML(d, why)
	if err != nil {
		t.Fatal(err)
	}
	again, err := diff.HTML(d, why)
	if err != nil || string(again) != string(page) {
		t.Fatalf("pr.html differs between two renderings of one diff (err %v)", err)
	}
	golden.Check(t, filepath.Join("..", "..", "report", "testdata", "pr.golden"), page)
}
