// Package harness runs YAML workloads: it reads a *.bench.yaml or
// *.foundry.yaml file strictly, compiles it into the canonical
// algal.bench.config.v1 / algal.foundry.config.v1 value the engines run,
// runs it through a fixed phase roster while keeping foundry-run.yml up to
// date, verifies the evidence, and judges the workload's gate. Organisms
// run through an injected evidence.Runner and evidence are read through an
// injected evidence.Store, so the harness does not care what executes them.
//
// # Workload files
//
// The kind comes from the file name (.bench.yaml or .foundry.yaml, or
// .yml). Paths are relative to the file.
// Unknown keys, wrong types, duplicate keys, merge keys, explicit tags
// (other than !queue and !repeats on a response), a second YAML document and aliases
// expanding past a size bound are rejected, as are references to things
// that do not exist, each as *fault.Error with file:line:column and the key
// path; problems the engine finds while admitting the compiled config are
// mapped back to the YAML node they came from. Unknown keys and names of
// systems, cases and executors come with a did-you-mean.
//
// Load also reads every organism the workload names (contracts.go) and
// rejects what a run would otherwise accept silently: a scripted answer
// its cell's output contract can never accept (a label typo, JSON failing
// the schema; tag a deliberate one !malformed), a cell whose route names
// no executor of its system, and an executor no cell reaches. Routing is
// effect.Router's: a cell's route.preset or route.provider names the
// executor; a cell without a route goes to the first executor by name.
//
//	name: ticket-triage          # id; names the run directory and the record's pipeline
//	revision: 1                  # bump when case semantics change (record source_revision)
//	description: free text
//	repeats: 3                   # run every case 3 times as samples (1..32; docs/repeats.md)
//	systems:                     # bench only, 1..8
//	  - id: cheap-single
//	    manifest: ../fixtures/triage/triage-single.algal.json
//	    executors: { cheap: cases }    # cases | scripted:<file> | replay:<dir> | cmd:<command>
//	candidates: [a.algal.json]   # foundry only (and/or generator:)
//	generator:                   # foundry only: manifest, args, output, field?, executors?
//	executors: { small: cases }  # foundry only: served to every candidate
//	cases:                       # inline cases and `- file: more.jsonl` / `- file: more.yaml`
//	  - id: t1
//	    split: train             # foundry only: train | validation | holdout
//	    args: { ticket: "..." }  # interface inputs
//	    expect: { queue: billing }
//	    responses:               # executor -> cell id -> response for this case
//	      cheap: { route: billing, draft: !queue [first, second], check: !malformed "???" }
//	      large: { route: !repeats [billing, other, billing] }  # one response per repeat
//	usage:                       # executor -> cell -> what one answer reports (executors served from cases)
//	  cheap: { route: { model: small-1, tokensIn: 210, tokensOut: 2 } }
//	scorer: [eq, [get, outputs, queue], [get, expect, queue]]   # algal.expr.v1 program
//	axes: [{ name: calls, dir: down, expr: [get, effectCalls] }] # bench only
//	prices: { cheap: { input: 0.1, output: 0.4 } }               # bench only
//	budget: { work: 1000000, attempts: 64, runs: 40 }            # foundry only
//	gate: ...                    # see below
//
// # Per-case scripted responses
//
// An executor declared `cases` is served by a scripted table the harness
// compiles from the cases' responses and writes beside config.json as
// scripted-<executor>.json. For every cell, the table holds a FIFO queue:
// the responses of each case in the order the engine runs cases on one
// session (bench: case order; foundry: train and validation cases in order,
// then holdout cases, which only the promoted candidate's session reaches).
// A plain value serves one call; `!queue [a, b]` serves several calls of
// the cell within the case. Each contender opens its own session, so each
// starts at the head of every queue, and a scripted session runs its cases
// one at a time. The table is keyed by cell id, never by request digest,
// so it does not depend on prompts or request shapes.
//
// The one obligation on authors is that a case declares exactly the calls
// it makes (a guarded cell that does not fire in a case gets no response
// there). The verify phase checks this from the receipts: for every
// executor/cell queue a contender used, each of its cases must have made
// as many live calls as it declared; otherwise verification fails naming
// the contender, case, cell and executor. Responses for cells a contender
// never calls are ignored for that contender.
//
// # Gate
//
// Bench: min-passed {system: n} (1..number of cases), on-pareto [system],
// max-tokens {system: n}, max-effect-calls {system: n}, outcomes {system:
// {case: pass|fail}}. Foundry: promoted (manifest key),
// min-validation-rate, min-train-rate, min-holdout-rate (above 0, at most
// 1; the split must have cases), min-population, outcomes {case:
// pass|fail} for the promoted candidate. Over repeated samples (repeats:
// k): min-pass-rate {system: r}, min-pass-hat-k {system: {k, rate}},
// max-flaky {system: n} (foundry: max-flaky n), and outcomes may say
// flaky; with repeats the other rules read the aggregate (per-repeat
// means, the pooled Pareto set, the pooled promotion; repeats_gate.go).
// A rule that could only hold
// vacuously is rejected when the workload loads: an empty gate, list or
// map, a system or case the workload does not declare, min-passed 0, a
// rate of 0, max-flaky or a flaky outcome with one repeat, pass^k with k
// above the repeats. A workload passes when its run completes, its evidence
// verifies, a foundry promotes a candidate and every rule holds; a case
// failure no rule mentions does not fail it.
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
// (repeats.go). Receipts live in the store. Reports, summary.md and
// report.html carry no wall-clock values; only the record does.
//
// # Bench runs in parts
//
// A bench workload may hold up to 20,000 cases and 64 systems. One that
// fits one algal.bench.v1 config (256 cases, 8 systems) runs as above.
// A larger one runs in parts (parts.go): cases in consecutive chunks of
// 256, systems in consecutive groups of 8, one part per chunk and group,
// the same split for the same counts. Each part leaves
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
// resumed by the next run of the same inputs (partsresume.go): the part
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
