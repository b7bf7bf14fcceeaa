// Package manifest admits algal.organism.v1 manifests: it is the gate every
// organism, foundry candidate and generated (spawned) manifest passes
// before it may run.
//
// Admission has two stages.
//
// Parse, ParseValue and ReadFile check one document against the contract
// (every field, kind and bound; unknown keys are rejected everywhere;
// embedded algal.expr.v1 programs are statically checked) and normalize it:
// budgets are filled in full, edges default to [], an interface gets empty
// inputs/outputs maps, port shorthand "text" becomes {"type":"text"}, empty
// input maps are dropped (kept on recall), agent-family views default to
// {"inputs":"*"} and view cell names become {"cell":id}. Run-time defaults
// (recall k and embedder, retry, maxTurns, maxEffectMs) are not filled in.
// The manifest digest is the sha256 of the canonical bytes of that
// normalized form (Manifest.Value, .Canonical, .Digest). Files are regular
// files of at most MaxManifestBytes; the normalized form obeys the same
// bound.
//
// Compile admits a parsed manifest together with its embedding graph:
// organism, repeat and each children are fetched by digest from a Resolver
// (MapResolver is the in-memory one; LoadModules fills it from a
// directory), re-normalized and digest-checked, and every cell is typed
// (Compiled.Signatures: fn cells from Builtins or Options.Fns, tool cells
// from Options.Tools and ReservedTools, embedded cells from the child's
// interface). Edges are then checked: producer and consumer ports exist,
// types are compatible (Compatible), guards fit their producer, inputs are
// single-assignment unless many, failure edges feed json ports and do not
// mix with normal edges, the graph is acyclic; views name declared inputs
// and ancestor cells, agent tools are known. The whole expansion is bounded
// (MaxCompileInstance instances, MaxCompileCells cells, MaxCompileEdges
// edges, MaxCompileBytes normalized bytes, every occurrence counted, depth
// MaxCompileDepth): BUDGET_EXHAUSTED is raised before the next instance is
// built, DEPTH_EXCEEDED past the depth.
//
// What the run engine consumes:
//
//   - Manifest: Key, Name, Budgets, Interface, Cells and Edges in declared
//     order, Cell(id) lookup, the normalized Value, Canonical and Digest.
//   - Cell: Index, ID, Kind, Declared ports, and exactly one kind struct:
//     Agent (agent/classifier/gate: prompt, view, output contract, route,
//     tools, compact, shadow, retry, budget), Decide (questions in
//     canonical order plus the verbatim map), Recall (query program, k,
//     embedder, rerank), Expr (compiled program and output), Embed
//     (organism/repeat/each: digest, via, maxRounds, carry, until, over,
//     maxItems), Slot, Tool, or Fn (the registry name). Each kind struct
//     keeps the verbatim JSON pieces that ride effect requests (Output.Value,
//     Route.Value, View.Value, Program.Value).
//   - Compiled: per-cell Signatures, Children by cell index, Edges with
//     resolved indices and producer/consumer Port types, Inbound/Outbound
//     edge lists in manifest order, Order (topological, declared order among
//     ready cells), InterfaceSignature, Stats.
//   - Builtins (the fn registry signatures with their work cost),
//     ReservedTools (mailbox drivers, agent.context.local.v1) and
//     ParseSignature for host tool files.
//
// Every rejection is an *fault.Error with a contract Code (PARSE_FAILED for
// malformed declarations, BUDGET_EXHAUSTED for count and byte bounds,
// MANIFEST_INVALID, GRAPH_CYCLE, TYPE_MISMATCH, GUARD_INVALID,
// INTERFACE_MISMATCH, FN_UNKNOWN, TOOL_UNKNOWN, STORE_MISS, DIGEST_MISMATCH,
// DEPTH_EXCEEDED) and a message naming cell, field and reason, e.g.
// `cells[3] "route": output.labels: duplicate label "bug"`. File-level
// rejections come from package canon (IO_FAILED, PARSE_FAILED,
// BUDGET_EXHAUSTED).
package manifest
