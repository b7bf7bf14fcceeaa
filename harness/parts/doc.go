// Package parts is a bench run in parts and its shards, apart from the
// run that uses them: the flight that runs a run's parts overlapping on
// one pool of slots (Flight, around the run's bench Measure), the fold of
// verified part reports into aggregate.json (Derive), the verification
// record a shard leaves beside each part it verified (record.go), the
// leftover part reports an unfinished run left that a later run of the
// same inputs may take (Leftovers), and the split of a batch's parts
// across shards with its shard.json (Shard, ShardManifest).
//
// How a part is checked against the store (replay, scripted alignment,
// usage) is the harness's verify phase: it hands that in as a Check, so
// every caller checks a part the same way.
package parts
