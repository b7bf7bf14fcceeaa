package artifact

import (
	"strings"
	"testing"

	ghci "github.com/algal-assay/assay/ci/github"
)

// GitHub caps a step's job summary at 1 MiB of bytes, not characters: a
// report of three-byte characters must be cut to fit in bytes.
func TestSummaryFitsInBytes(t *testing.T) {
	t.Parallel()
	line := strings.Repeat("→", 99) + "\n" // 298 bytes, 100 characters
	var sections []ghci.Section
	for i := range 40 {
		sections = append(sections, ghci.Section{Title: "part " + strings.Repeat("x", i%3), Markdown: strings.Repeat(line, 1000)})
	}
	got := summaryReport(sections, "See the artifact.")
	if len(got) > summaryBytes {
		t.Fatalf("summary is %d bytes, over %d", len(got), summaryBytes)
	}
	if len(got) < summaryBytes/2 || !strings.Contains(got, "See the artifact.") || !strings.Contains(got, "Report truncated") {
		t.Fatalf("summary of %d bytes lost more than needed or lacks the notice", len(got))
	}
	// A report that fits is kept whole.
	small := summaryReport(sections[:1], "p")
	if !strings.Contains(small, strings.Repeat(line, 1000)) {
		t.Fatal("a small report was cut")
	}
}
