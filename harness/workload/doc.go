// Package workload reads YAML workloads and compiles them: it reads a
// *.bench.yaml or *.foundry.yaml file strictly (Load, LoadAll), checks what
// it names (organisms, executors, backends, answers against output
// contracts), and compiles it (Compile) into the canonical
// algal.bench.config.v1 / algal.foundry.config.v1 value the engines run,
// with its scripted tables, its parts when it is too big for one config,
// and the run directory's identity (its slug). It runs nothing: package
// harness runs what it compiles.
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
package workload
