package verify

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Outside GitHub Actions nothing is written; under it the step summary
// receives the table.
func TestActionsOnlyUnderGitHubActions(t *testing.T) {
	summary := filepath.Join(t.TempDir(), "summary.md")
	t.Setenv("GITHUB_STEP_SUMMARY", summary)
	t.Setenv("GITHUB_ACTIONS", "")
	var w bytes.Buffer
	r := &Report{}
	if err := r.Actions(&w); err != nil || w.Len() != 0 {
		t.Fatalf("outside Actions: %q, %v", w.String(), err)
	}
	if _, err := os.Stat(summary); err == nil {
		t.Fatal("the step summary was written outside Actions")
	}
	t.Setenv("GITHUB_ACTIONS", "true")
	if err := r.Actions(&w); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(summary)
	if err != nil || !strings.Contains(string(b), strings.TrimSpace(r.Markdown())) {
		t.Errorf("step summary %q, %v", b, err)
	}
}
