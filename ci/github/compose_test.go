package github

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/algal-assay/assay/engine/fault"
)

const testMarker = "<!-- assay:pr-check -->"
const testPointer = "Full report: job summary and the `assay-pr-check` artifact of [the check run](https://github.test/run/1)."

// report builds a PR-check report in the producer's order with a
// regressions section of n table rows inside <details> and a code fence.
func report(n int) []Section {
	var reg strings.Builder
	reg.WriteString("<details>\n<summary>Largest regressions</summary>\n\n| case | before | after |\n|---|---|---|\n")
	for i := range n {
		fmt.Fprintf(&reg, "| case-%05d | %d ms | %d ms |\n", i, 100+i, 200+i)
	}
	reg.WriteString("\n```text\n")
	for i := range n {
		fmt.Fprintf(&reg, "trace line %d of the slowest case\n", i)
	}
	reg.WriteString("```\n</details>\n")
	return []Section{
		{Title: "Verdict", Markdown: "**FAIL**: 3 gates failed (latency p95, cost, accuracy)."},
		{Title: "Pareto diff", Markdown: "| organism | before | after |\n|---|---|---|\n| a | on front | dominated |\n"},
		{Title: "Promotion diff", Markdown: "- `org-a` would no longer be promoted\n"},
		{Title: "Largest regressions", Markdown: reg.String()},
	}
}

// balanced reports whether s leaves no code fence, <summary> or <details> open.
func balanced(s string) bool {
	var st blockState
	for _, line := range strings.SplitAfter(s, "\n") {
		st.feed(line)
	}
	return !st.open()
}

func TestComposeFitsUnchanged(t *testing.T) {
	t.Parallel()
	secs := report(3)
	got := Compose(testMarker, secs, MaxCommentChars, testPointer)
	if !strings.HasPrefix(got, testMarker+"\n## Verdict\n\n**FAIL**") {
		t.Fatalf("unexpected start: %q", got[:min(80, len(got))])
	}
	for _, s := range secs {
		if !strings.Contains(got, "## "+s.Title+"\n") || !strings.Contains(got, strings.TrimSpace(s.Markdown)) {
			t.Errorf("section %q missing", s.Title)
		}
	}
	if strings.Contains(got, "Report truncated") || strings.Contains(got, testPointer) {
		t.Error("a body that fits must not carry the truncation notice")
	}
	if !balanced(got) {
		t.Error("output leaves a block open")
	}
}

func TestComposeTruncatesLargeReport(t *testing.T) {
	t.Parallel()
	secs := report(5000) // about 400 KB
	got := Compose(testMarker, secs, MaxCommentChars, testPointer)
	if n := Length(got); n > MaxCommentChars {
		t.Fatalf("length %d over the limit", n)
	}
	if n := utf8.RuneCountInString(got); n > MaxCommentChars {
		t.Fatalf("%d characters over the limit", n)
	}
	if !strings.HasPrefix(got, testMarker+"\n## Verdict\n\n**FAIL**: 3 gates failed (latency p95, cost, accuracy).\n") {
		t.Error("verdict section not kept whole at the top")
	}
	for _, title := range []string{"Pareto diff", "Promotion diff"} {
		if !strings.Contains(got, "## "+title+"\n") {
			t.Errorf("leading section %q dropped although it fits", title)
		}
	}
	if !strings.Contains(got, "case-00000") {
		t.Error("the regressions section should be cut, not dropped, when most of the budget is left")
	}
	if !strings.Contains(got, "not shown in full: Largest regressions (cut).") {
		t.Errorf("notice does not name the cut section: %q", got[len(got)-300:])
	}
	if !strings.HasSuffix(got, testPointer+"\n") {
		t.Error("pointer missing at the end")
	}
	if !balanced(got) {
		t.Error("cut left a code fence or <details> open")
	}
	// The budget is used: the cut keeps rows until close to the limit.
	if n := Length(got); n < MaxCommentChars-200 {
		t.Errorf("only %d of %d characters used", n, MaxCommentChars)
	}
}

func TestComposeBoundsEveryLimit(t *testing.T) {
	t.Parallel()
	secs := report(200)
	full := Compose(testMarker, secs, 1<<30, testPointer)
	for limit := 0; limit <= Length(full)+10; limit += 37 {
		got := Compose(testMarker, secs, limit, testPointer)
		if n := Length(got); n > limit {
			t.Fatalf("limit %d: length %d", limit, n)
		}
		if limit >= Length(full) {
			if got != full {
				t.Fatalf("limit %d: a body that fits was changed", limit)
			}
			continue
		}
		// Once the marker, the verdict and the notice fit, the output is a
		// well-formed truncated report.
		if limit >= 700 {
			if !strings.HasPrefix(got, testMarker+"\n## Verdict\n\n**FAIL**") {
				t.Fatalf("limit %d: verdict lost", limit)
			}
			if !strings.Contains(got, testPointer) {
				t.Fatalf("limit %d: pointer lost", limit)
			}
			if !balanced(got) {
				t.Fatalf("limit %d: unbalanced output:\n%s", limit, got)
			}
		}
	}
}

func TestComposeDropsTrailingSectionsWhole(t *testing.T) {
	t.Parallel()
	secs := []Section{
		{Title: "Verdict", Markdown: "PASS"},
		{Title: "Pareto diff", Markdown: strings.Repeat("x", 50) + "\n"},
		{Title: "Big", Markdown: strings.Repeat("y", 5000)}, // one line: cannot be cut
		{Title: "After", Markdown: "tail"},
	}
	got := Compose("<!-- m -->", secs, 400, "See the summary.")
	want := "<!-- m -->\n## Verdict\n\nPASS\n\n## Pareto diff\n\n" + strings.Repeat("x", 50) +
		"\n\n## Big\n\n---\n> **Report truncated** to fit in one comment; not shown in full: Big (cut), After. See the summary.\n"
	if got != want {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
}

func TestComposeCutsInsideFence(t *testing.T) {
	t.Parallel()
	code := "```go\n" + strings.Repeat("fmt.Println(1)\n", 100) + "```\n"
	secs := []Section{{Title: "Verdict", Markdown: "ok"}, {Title: "Code", Markdown: code}}
	got := Compose("<!-- m -->", secs, 600, "P.")
	if Length(got) > 600 {
		t.Fatalf("length %d", Length(got))
	}
	if !strings.Contains(got, "fmt.Println(1)\n```\n\n---\n") {
		t.Fatalf("fence not closed before the notice:\n%s", got)
	}
}

func TestComposeCountsUTF16(t *testing.T) {
	t.Parallel()
	// U+1F600 is one character but two UTF-16 units; 40,000 of them are
	// 80,000 units, so the body must be cut although it has 40,000 runes.
	secs := []Section{{Title: "Verdict", Markdown: "ok"}, {Title: "Emoji", Markdown: strings.Repeat("\U0001F600\n", 40000)}}
	got := Compose(testMarker, secs, MaxCommentChars, testPointer)
	if Length(got) > MaxCommentChars {
		t.Fatalf("length %d", Length(got))
	}
	if !strings.Contains(got, "Report truncated") {
		t.Fatal("expected truncation")
	}
	if Length("a\U0001F600") != 3 {
		t.Fatal("Length must count astral characters twice")
	}
}

func TestSplitSections(t *testing.T) {
	t.Parallel()
	md := "intro line\n\n## Verdict\n\nPASS\n\n```sh\n## not a heading\n```\n<details>\n\n## inside details\n</details>\n## Pareto diff ##\nrow\n"
	got := SplitSections(md)
	want := []Section{
		{Markdown: "intro line\n\n"},
		{Title: "Verdict", Markdown: "\nPASS\n\n```sh\n## not a heading\n```\n<details>\n\n## inside details\n</details>\n"},
		{Title: "Pareto diff", Markdown: "row\n"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d sections: %#v", len(got), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("section %d: got %#v want %#v", i, got[i], want[i])
		}
	}
}

func TestMarker(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		key, want string
		ok        bool
	}{
		{"pr-check", "<!-- assay:pr-check -->", true},
		{"bench.nightly_2", "<!-- assay:bench.nightly_2 -->", true},
		{"", "", false},
		{"Upper", "", false},
		{"a -->", "", false},
		{"-lead", "", false},
		{strings.Repeat("a", 65), "", false},
	} {
		got, err := Marker(tc.key)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("Marker(%q) = %q, %v", tc.key, got, err)
		}
		if err != nil && err.(*fault.Error).Code != CodeInput {
			t.Errorf("Marker(%q): code %s", tc.key, err.(*fault.Error).Code)
		}
	}
}

func FuzzCompose(f *testing.F) {
	f.Add("## A\n\nx\n<details>\n```\ny\n", 120)
	f.Add(strings.Repeat("| a | b |\n", 50), 300)
	f.Fuzz(func(t *testing.T, md string, limit int) {
		if limit < 0 || limit > 1<<16 {
			return
		}
		secs := append([]Section{{Title: "Verdict", Markdown: "PASS"}}, SplitSections(md)...)
		got := Compose(testMarker, secs, limit, "P.")
		if Length(got) > limit {
			t.Fatalf("length %d over limit %d", Length(got), limit)
		}
		if limit >= 200 && utf8.ValidString(md) && !strings.HasPrefix(got, testMarker+"\n## Verdict\n\nPASS\n") {
			t.Fatalf("verdict lost at limit %d: %q", limit, got)
		}
	})
}

func BenchmarkComposeTruncate(b *testing.B) {
	secs := report(5000)
	for b.Loop() {
		Compose(testMarker, secs, MaxCommentChars, testPointer)
	}
}
