package diff

import "github.com/algal-assay/assay/report"

// ArtifactHTML is the name of the drawn report in the PR check's artifact.
const ArtifactHTML = "pr.html"

// HTML renders pr.html from the diff (report.PRFromDiff says what it
// draws). It reads the reports of the runs Compute compared, so it needs
// the Diff that Compute returned, not one decoded from JSON. o supplies
// the reproduce command.
func HTML(d *Diff, o RenderOptions) ([]byte, error) {
	return report.PR(report.PRFromDiff(d, o.Command))
}
