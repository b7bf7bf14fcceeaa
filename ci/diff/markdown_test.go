package diff_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/algal-assay/assay/ci/diff"
	ghci "github.com/algal-assay/assay/ci/github"
)

// hostile is what a pull request can put in a workload name, a system id,
// a case id, a candidate key, a gate message or a file name.
const hostile = "x</details><!-- | y\n## Injected\n<script>@octocat [l](http://e) `c`"

func hostileDiff() *diff.Diff {
	rate := diff.Rate{Passed: 1, Total: 2}
	d := &diff.Diff{
		Base: "base", Head: "head",
		Problems: []string{hostile},
		Notes:    []string{hostile},
		Workloads: []*diff.Workload{{
			Name: hostile, Kind: diff.KindBench, Status: diff.StatusChanged,
			Base:        &diff.Side{Status: "complete", Verified: true, Gates: true, Passed: true},
			Head:        &diff.Side{Status: "failed", Verified: false},
			FailedGates: []diff.GateRule{{Name: hostile, Message: hostile}},
			Mismatches:  []string{hostile},
			Bench: &diff.Bench{
				Systems: []*diff.System{{ID: hostile, Pareto: "left",
					Base: &diff.SystemStats{ManifestKey: hostile, ManifestDigest: "sha256:aa", Passed: 2, Total: 2, OnPareto: true},
					Head: &diff.SystemStats{ManifestKey: hostile, ManifestDigest: "sha256:bb", Passed: 1, Total: 2}}},
				ParetoBase: []string{hostile}, ParetoHead: []string{}, Joined: []string{}, Left: []string{hostile},
				Flips: []diff.Flip{{Subject: hostile, Case: hostile, Base: diff.Pass, Head: diff.Fail}},
			},
		}, {
			Name: hostile + "2", Kind: diff.KindFoundry, Status: diff.StatusChanged,
			Head: &diff.Side{Status: "complete", Verified: true, Gates: true, Passed: true},
			Foundry: &diff.Foundry{
				Base: &diff.Promotion{Key: hostile, Digest: "sha256:aa", Validation: rate},
				Head: &diff.Promotion{Key: hostile + "b", Digest: "sha256:bb", Validation: rate}, PromotedChanged: true,
				Candidates: []*diff.CandidatePair{{Key: hostile, Head: &diff.CandidateStats{Validation: rate}}},
				Added:      []diff.Candidate{{Key: hostile, Digest: "sha256:cc"}},
			},
		}},
		Regressions: []*diff.Regression{{Workload: hostile, Subject: hostile, Metric: "passed", Base: rate, Head: diff.Rate{Total: 2}, Drop: 0.5, Cases: []string{hostile}}},
		Replays: &diff.Replays{Archive: "receipts", Receipts: 1, Touched: 1, Results: []diff.Replay{{
			Key: hostile, File: hostile + ".json", BaseManifest: "sha256:aa", HeadManifest: "sha256:bb", Verdict: "diverged", Detail: hostile,
		}}},
	}
	d.Settle()
	return d
}

var codeSpan = regexp.MustCompile("`[^`\n]*`")

// Strings from the pull request are data in the comment: they cannot open
// an HTML comment (which would hide the rest), close the <details> around
// the regressions, start a heading, mention anyone, or add table cells or
// rows.
func TestMarkdownNeutralizesUserStrings(t *testing.T) {
	t.Parallel()
	md := diff.Markdown(hostileDiff(), diff.RenderOptions{})
	// Inside a code span nothing is markup; look at the rest.
	prose := codeSpan.ReplaceAllString(md, "`…`")
	for _, bad := range []string{"<!--", "<script", "\n## Injected", "@octocat", "[l]("} {
		if strings.Contains(prose, bad) {
			t.Errorf("rendered Markdown contains %q:\n%s", bad, md)
		}
	}
	if o, c := strings.Count(md, "<details>"), strings.Count(md, "</details>"); o != c || o != 2 {
		t.Errorf("<details> opened %d times, closed %d times (want 2 and 2):\n%s", o, c, md)
	}
	// Every table row has as many unescaped pipes as its header.
	lines := strings.Split(md, "\n")
	want := -1
	for _, l := range lines {
		if !strings.HasPrefix(l, "|") {
			want = -1
			continue
		}
		n := cellSeparators(l)
		if want < 0 {
			want = n
			continue
		}
		if n != want {
			t.Errorf("table row has %d cell separators, header has %d: %q", n, want, l)
		}
	}
	// The same holds for the composed comment.
	marker, _ := ghci.Marker(ghci.DefaultKey)
	c := ghci.Compose(marker, diff.Sections(hostileDiff(), diff.RenderOptions{}), ghci.MaxCommentChars, "")
	if strings.Count(codeSpan.ReplaceAllString(c, "`…`"), "<!--") != 1 || strings.Contains(c, "\n## Injected") {
		t.Errorf("comment holds an HTML comment besides the marker:\n%s", c)
	}
}

// cellSeparators counts the pipes that split a GFM table row: a backslash
// escapes the character after it, so in `\\|` the pipe still splits.
func cellSeparators(row string) int {
	n := 0
	for i := 0; i < len(row); i++ {
		switch row[i] {
		case '\\':
			i++
		case '|':
			n++
		}
	}
	return n
}
