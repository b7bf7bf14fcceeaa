package diff

import (
	ghci "github.com/algal-assay/assay/ci/github"
	"github.com/algal-assay/assay/report"
)

// The pull-request comment and the job summary render from the diff in
// report (report/pr_md*.go); these wrappers hand their sections to the
// comment composer's type.

// RenderOptions bound the rendering (report.MarkdownOptions).
type RenderOptions = report.MarkdownOptions

// Section titles, in the comment's priority order.
const (
	TitleVerdict     = report.TitleVerdict
	TitlePareto      = report.TitlePareto
	TitlePromotions  = report.TitlePromotions
	TitleFlaky       = report.TitleFlaky
	TitleRegressions = report.TitleRegressions
	TitleReplays     = report.TitleReplays
	TitleFlips       = report.TitleFlips
	TitleNotes       = report.TitleNotes
	TitleReproduce   = report.TitleReproduce
	TitlePlot        = report.TitlePlot
)

// Sections renders the diff as comment sections in priority order
// (report.CommentSections).
func Sections(d *Diff, o RenderOptions) []ghci.Section {
	return sections(report.CommentSections(d, o))
}

// SummarySections are the job summary's sections: the comment's, with the
// Pareto plot tables after the Pareto sets (report.JobSummarySections).
func SummarySections(d *Diff, o RenderOptions) []ghci.Section {
	return sections(report.JobSummarySections(d, o))
}

// Footer is the comment's last paragraph (report.CommentFooter).
func Footer(d *Diff, o RenderOptions) string { return report.CommentFooter(d, o) }

// Markdown renders the whole diff as one document (no comment marker).
func Markdown(d *Diff, o RenderOptions) string {
	return ghci.Compose("", Sections(d, o), 1<<30, "")
}

func sections(rs []report.Section) []ghci.Section {
	out := make([]ghci.Section, len(rs))
	for i, s := range rs {
		out[i] = ghci.Section(s)
	}
	return out
}
