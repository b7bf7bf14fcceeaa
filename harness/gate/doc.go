// Package gate judges a workload's gate (its rules, parsed by package
// workload) against a run's evidence: a bench report, a foundry result,
// or, for a repeated run, the aggregate of its repeats (package repeats).
// Each rule gets a verdict and a message that says what was required,
// what was measured and where the rule is written; the words those
// messages share with summary.md (ShortJSON, RepeatWord, MeanCount, Ints,
// FlakyCases) are exported for it.
package gate
