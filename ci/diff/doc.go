// Package diff compares two sets of Assay run directories, the runs of a
// pull request's base and of its head, and says what the change did: per
// bench workload, each system's passed/total, tokens, cost and effect calls
// with deltas, who joined or left the Pareto set and which cases flipped;
// per foundry workload, whether the promoted candidate changed, the
// promoted candidate's validation, train and holdout rates with deltas, and
// the candidates added, removed or revised; and, for archived receipts whose
// organism the change touched, the verdict of replaying the receipt against
// the revised organism (engine/vm Compare).
//
// # Inputs
//
// A run set is a runs root as the harness writes it:
// <root>/<workload>/<run-slug>/ with report.json (or budget.json),
// verification.json, gate.json and foundry-run.yml. When a workload holds
// several run directories (a local runs/ kept across edits), the one whose
// gate.json was written last is used and the others are listed in the
// diff's notes. A run's verification and gate verdicts are never read
// from its verification.json and gate.json: [LoadSet] re-derives them from
// the report (verified against the side's store) and the side's workload
// (ci/verify.CheckRun), and a run whose stored files disagree is an
// EVIDENCE_INVALID error naming the file and field.
//
// # Touched organisms and archived receipts
//
// Archived receipts are algal.run.v1 receipts kept as *.json files in a
// directory committed to the repository (default receipts/). An organism
// is touched when a manifest file (*.algal.json) in the base tree
// normalizes to the digest a receipt names as its manifestDigest, and the
// head tree holds a manifest file with the same manifest key whose
// canonical digest differs. Every such receipt is replayed against every
// distinct head revision of that key; a key that no head file carries any
// more is reported as removed, without a replay. Receipts whose manifest no
// base file carries (already stale, or from elsewhere) are not touched by
// the change and are only counted.
//
// # Output
//
// A Diff is plain data, the report package's model (report/diff.go; the
// names here are aliases): report renders it for people ([Sections],
// [Markdown] and [HTML] hand over report's comment sections in the
// priority order of the pull-request comment: verdict, Pareto sets,
// promotions, largest regressions, archived receipts, case flips; and
// pr.html) and [Diff.JSON] for machines. All are deterministic:
// everything is sorted, and no wall-clock value or absolute temporary
// path reaches them.
package diff
