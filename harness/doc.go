// Package harness runs YAML workloads: it takes a workload loaded and
// compiled by package workload, runs it through a fixed phase roster while
// keeping foundry-run.yml up to date, verifies the evidence, judges the
// workload's gate and installs the run directory. Organisms run through an
// injected evidence.Runner and evidence are read through an injected
// evidence.Store, so the harness does not care what executes them.
//
// # Run directories
//
// A run goes to <out>/<name>/<name>-r<revision>-<10 hex>, where the hex is
// a digest of everything that decides the results: the config with
// workload-relative paths plus the digest of every manifest and scripted
// table it reads. The same inputs land in the same directory. The run is
// built in a hidden staging directory beside it (.<slug>.partial-*) and
// swapped into place in one atomic exchange when it ends (package rundir),
// so the directory is always one whole run. Writers of one run directory
// take turns under its lock (.<slug>.lock): a run that finds an identical
// complete run already installed keeps it and says so (Outcome.Notes).
// Two exceptions protect evidence: a failed or cancelled run never
// replaces a complete run of the same inputs, and a run whose record could
// not say how it ended (a full disk) is never installed; either stays in
// its staging directory (Outcome.RunDir names it). A hard-killed run
// leaves its staging directory; the next run in the same directory removes
// it once its owner lock says the owner is gone (a bench run in parts first
// reuses the finished parts it holds; see below). Files: config.json, scripted-*.json, one
// system-<id>.json or candidate-NN-<key>.json per contender, report.json
// (budget.json when a foundry exhausts its habitat budget),
// verification.json, gate.json, summary.md, report.html (package
// report: the Pareto plot or the ranking, drawn), _assembly.json and
// foundry-run.yml. A run with repeats adds report-r02.json ... (each
// repeat's ordinary report), per-repeat scripted tables where responses
// differ per repeat, and repeats.json, the aggregate re-derived from them
// (package repeats). Receipts live in the store. Reports, summary.md and
// report.html carry no wall-clock values; only the record does.
//
// # Bench runs in parts
//
// A bench workload may hold up to 20,000 cases and 64 systems. One that
// fits one algal.bench.v1 config (256 cases, 8 systems) runs as above.
// A larger one runs in parts (parts.go and package parts): cases in
// consecutive chunks of 256, systems in consecutive groups of 8, one part
// per chunk and group, the same split for the same counts. Each part leaves
// part-NNNN-config.json, part-NNNN-scripted-<executor>.json and
// part-NNNN-report.json, an ordinary report that verifies on its own;
// instead of config.json, system-*.json and report.json the run directory
// holds aggregate.json (assay.bench.aggregate.v1: every system's passed,
// total, calls, work, usage and attribution summed over its parts in
// chunk order, axis values and the Pareto set over the sums, the part
// list with each report's digest), written by the verify phase from the
// verified parts and re-derived by `ci verify`. Gates, summary.md and
// report.html read the aggregate. A foundry holds at most 256 cases: its
// single promotion cannot be split.
//
// A bench run in parts that was killed, cancelled or failed part-way is
// resumed by the next run of the same inputs (package parts): the part
// reports its staging directory (or the unfinished run directory it
// installed) holds are taken if they are canonical and pass the verify
// phase's check of a part against the store and the part's config, and
// only the other parts run. The run directory is the one an uninterrupted
// run writes, byte for byte, the record aside (it names each reused report
// reused-part-report); Outcome.Resume and a note say what was reused, and
// Options.Fresh runs every part.
//
// # Phase roster
//
//	1 compile-workload     step    config.json and scripted tables, admitted from disk
//	2 candidate-source     branch  files | generator (skipped for a bench)
//	3 evaluate-contenders  loop    one iteration per system or candidate
//	4 verify-evidence      step    engine verification plus scripted alignment
//	5 summarize            step    gate.json, summary.md, report.html
//
// A phase error fails the phase and the run; a cancelled context or
// SIGINT/SIGTERM (Options.HandleSignals) cancels the run.
package harness
