// Command promptfoo writes the two sides of the comparison of Assay with
// promptfoo 0.120 on one shape (issue 31 item 4: "10,000 cases at or under
// 0.05x promptfoo's wall, promptfoo 0.120, echo provider, same cases and
// answers"), from one list of cases, so the same cases and answers reach
// both tools:
//
//	go run ./promptfoo -out DIR [-cases 10000] [-triage ../fixtures/triage]
//
// (from the benchmarks module) writes
//
//	DIR/promptfoo/config.yaml       the promptfoo eval
//	DIR/assay/promptfoo.bench.yaml  the Assay workload, with its case files
//	                                and its organism beside it
//
// README.md beside this file has the commands that run and time them.
//
// # The cases
//
// Case i (t00001 ... t10000) is a support ticket written from one of a few
// ticket-triage templates per queue (billing, technical, account, other;
// the queue is i mod 4), its expected queue, and the answer the "model"
// gives: the expected queue, except every seventh case (i mod 7 = 3), where
// it answers the next queue. So both tools must report the same 8,571
// passed and 1,429 failed of 10,000; the runner scripts print the tally, a
// check that the two did the same thing.
//
// # What promptfoo does
//
// config.yaml has one prompt, "Ticket: {{ticket}}\nQueue: {{answer}}", the
// built-in echo provider (its output is the rendered prompt, so the answer
// it "gives" is the case's answer), and one test per case: vars ticket and
// answer, and one regex assertion that the echoed text ends with
// "\nQueue: <expected>" (the answer line equals the expected queue; the
// ticket texts never contain "Queue:"). `promptfoo eval -c config.yaml
// --no-cache --no-write --no-table --no-progress-bar` loads the config,
// renders 10,000 prompts, calls echo, runs 10,000 assertions and prints a
// summary; it writes no results database (--no-write) and, unless -o is
// given, no results file. Telemetry, update checks and sharing are off
// (PROMPTFOO_DISABLE_TELEMETRY, PROMPTFOO_DISABLE_UPDATE,
// PROMPTFOO_DISABLE_SHARING) and its config directory is a fresh
// directory per run.
//
// # What Assay does
//
// promptfoo.bench.yaml is a bench of one system: the one-classifier triage
// organism of fixtures/triage (an input cell and a classifier cell whose
// output is a choice of the four queues), run on a per-case scripted
// executor ("cases": each case's responses give the classifier's answer)
// and scored by exact match of the output queue against the case's
// expected queue. `assay run promptfoo.bench.yaml --dir D/.algal --out
// D/runs`, D a fresh directory per run, loads and compiles the workload,
// splits it into 40 parts of 256 cases, runs every case in the ALGAL VM
// (admission of the manifest, budgets, the scripted effect checked against
// the cell's output contract), seals a receipt per case and writes it to a
// content-addressed store (10,000 files), then verifies every receipt by
// reading it back, checking its digest and replaying it offline, and
// writes the part reports, aggregate.json, verification.json, gate.json,
// summary.md, report.html and the run record, and installs the run
// directory atomically.
//
// # What is not equal
//
// Assay does strictly more per case than promptfoo here: promptfoo's echo
// has no effect record, no receipt, no store and no verification, and
// promptfoo keeps its results in memory (with --no-write and no -o it
// writes nothing). Assay's scripted answer goes through the organism's
// contracts (the choice is checked against the cell's labels), and every
// case leaves a receipt on disk that is read back and replayed. promptfoo
// renders a Nunjucks template per case and evaluates a regex, Assay
// evaluates its exact-match scorer. Neither side calls a network. So the
// ratio is of a tool that writes and verifies evidence against one that
// does not: it is not a like-for-like cost of the same work, but of the
// same cases and answers judged to the same tally.
package main
