package verify

import (
	"fmt"
	"io"
	"os"

	ghci "github.com/algal-assay/assay/ci/github"
)

// Actions reports r to GitHub Actions when GITHUB_ACTIONS is "true":
// every failure as an "::error file=PATH::" annotation on w (paths
// relative to GITHUB_WORKSPACE), and the Markdown table appended to
// $GITHUB_STEP_SUMMARY when it is set. Elsewhere it does nothing.
func (r *Report) Actions(w io.Writer) error {
	if os.Getenv("GITHUB_ACTIONS") != "true" {
		return nil
	}
	for _, a := range r.Annotations(os.Getenv("GITHUB_WORKSPACE")) {
		fmt.Fprintln(w, a)
	}
	if path := os.Getenv("GITHUB_STEP_SUMMARY"); path != "" {
		return ghci.AppendStepSummary(path, r.Markdown())
	}
	return nil
}
