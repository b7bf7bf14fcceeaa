// Package runrecord writes and reads foundry-run.yml, the run directory's own
// account of a workload run: which pipeline (workload) it was, which phase
// roster it followed, how far it got, how often each loop iterated, which
// chain member each branch selected, and which phase last wrote each file.
//
// The filesystem alone cannot answer those questions (loops overwrite one
// basename, several phases may declare one file, a branch's choice leaves no
// file), so the harness records them as it goes. The harness drives a
// Recorder; every rewrite replaces the file atomically, so a crash leaves the
// last complete state (normally status running) rather than half a file.
//
// Readers call Read, which distinguishes a run that predates the protocol (no
// record), a record that cannot be parsed, assembly match/drift/unknown
// against today's workload, a record whose pipeline the reader has no
// workload for, and, when no record is usable, a degraded view reconstructed
// from file names and explicitly labelled as such.
package runrecord
