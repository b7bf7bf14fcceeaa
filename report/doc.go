// Package report renders every report Assay writes from one results
// model, one file per format (as Ginkgo's reporters/ does).
//
// # The model
//
// results.go holds it: Results (an `assay run` job: a Workload per file,
// each with the Run it made: the run directory's facts, contender table,
// gate and verification), and evidence.go the Evidence of `assay ci
// verify`. The harness fills Results and Run from its outcome
// (harness.JobResults, harness.RunResults), ci/verify fills Evidence; the
// pull-request check's input is PRInput, built by ci/diff.
//
// # The formats
//
//   - summary.md: summary_md.go (SummaryMD)
//   - report.html: bench.go and foundry.go with templates/ (Bench, Foundry)
//   - `assay run --json`: json.go (JSON)
//   - JUnit XML: junit.go (JUnit)
//   - pr.html: pr.go (PR)
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
// run, cmd/assay the job's JSON and JUnit, and ci pr.html and the job
// summary, so the package sits at the top level and imports only engine
// (the report types it draws) and internal.
//
// # Determinism
//
// html/template escapes every string from the evidence. Coordinates are
// formatted with a fixed number of decimals, maps are read in sorted key
// order and JSON values are shown in canonical form, so the same evidence
// gives byte-identical files, whatever the concurrency of the run or the
// machine. No report carries a wall-clock value.
package report
