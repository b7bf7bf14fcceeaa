// Package report renders the reports people look at: report.html in a
// bench or foundry run directory and pr.html in the pull-request check's
// artifact. Each is one self-contained HTML file (inline CSS and SVG, no
// script, nothing fetched from the network), so it reads the same opened
// from disk, from a downloaded artifact, or offline.
//
// A bench report draws the Pareto plot (the cost signal, or the declared
// axes, against cases passed; the frontier joined and labelled, dominated
// systems greyed and named with who dominates them), then the systems
// table that doubles as the plot's text alternative, and the case matrix
// with every cell's outputs, tokens, cost and receipt digest on demand. A
// foundry report ranks the candidates with the column that decided each
// place, and shows train, validation and holdout per candidate and the
// lineage of a generated population. A pull-request report puts base and
// head on one plot with an arrow for every system that moved.
//
// # Layering
//
// The renderer is its own concern, beside harness rather than inside it or
// inside ci: harness writes report.html at the end of every run, and ci
// writes pr.html, so the package sits at the top level and imports only
// engine (the report types it draws). Its inputs are engine reports and
// plain structs; the pull-request input is built by ci/diff.
//
// # Determinism
//
// html/template escapes every string from the evidence. Coordinates are
// formatted with a fixed number of decimals, maps are read in sorted key
// order and JSON values are shown in canonical form, so the same evidence
// gives byte-identical files, whatever the concurrency of the run or the
// machine. No page carries a wall-clock value.
package report
