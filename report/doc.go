// Package report renders every report Assay writes from one results
// model, one file per format (as Ginkgo's reporters/ does).
//
// # The model
//
// results.go holds it: Results (an `assay run` job: a Workload per file,
// each with the Run it made: the run directory's facts, contender table,
// gate and verification), diff.go the Diff of a pull request's base and
// head runs (workloads, regressions, statistics, flakiness, archived
// receipt replays), and evidence.go the Evidence of `assay ci verify`.
// The harness fills Results and Run from its outcome (harness.JobResults,
// harness.RunResults), ci/diff computes the Diff (ci/diff.Compute, whose
// names for these types are aliases), ci/verify fills Evidence.
//
// # The formats
//
//   - summary.md: summary_md.go (SummaryMD)
//   - report.html: bench.go and foundry.go with templates/ (Bench, Foundry)
//   - `assay run --json`: json.go (JSON)
//   - JUnit XML: junit.go (JUnit)
//   - the pull-request comment: pr_md.go (CommentSections,
//     CommentFooter), its sections in pr_md_pareto.go,
//     pr_md_promotions.go, pr_md_repeats.go and pr_md_changes.go, with
//     pr_md_statistics.go and pr_md_text.go for their wording
//   - the pull-request check's job summary: pr_md_plot.go
//     (JobSummarySections: the comment's sections and the plot tables)
//   - diff.json: diff.go (Diff.JSON)
//   - pr.html: pr_diff.go (PRFromDiff) and pr.go (PR)
//   - `assay ci verify`: evidence_text.go (its lines), evidence_json.go
//     (--json), annotations.go (GitHub workflow commands) and
//     jobsummary.go (the job summary)
//
// The HTML reports are one self-contained file each (inline CSS and SVG,
// no script, nothing fetched from the network), so they read the same
// opened from disk, from a downloaded artifact, or offline. A bench report
// draws the Pareto plot (the cost signal, or the declared axes, against
// cases passed; the frontier joined and labelled, dominated systems greyed
// and named with who dominates them), then the systems table that doubles
// as the plot's text alternative, and the case matrix with every cell's
// outputs, tokens, cost and receipt digest on demand. A foundry report
// ranks the candidates with the column that decided each place, and shows
// train, validation and holdout per candidate and the lineage of a
// generated population. A pull-request report puts base and head on one
// plot with an arrow for every system that moved.
//
// # Layering
//
// Rendering is its own concern, beside harness rather than inside it or
// inside ci: harness writes summary.md and report.html at the end of every
// run, cmd/assay the job's JSON and JUnit, and ci the comment, pr.html and
// the job summary, so the package sits at the top level and imports only
// engine (the report types it draws) and internal. It never imports ci:
// ci/diff computes the Diff and hands it here.
//
// # Determinism
//
// html/template escapes every string from the evidence. Coordinates are
// formatted with a fixed number of decimals, maps are read in sorted key
// order and JSON values are shown in canonical form, so the same evidence
// gives byte-identical files, whatever the concurrency of the run or the
// machine. No report carries a wall-clock value.
package report
