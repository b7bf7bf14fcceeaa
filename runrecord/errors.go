package runrecord

import (
	"fmt"

	"github.com/algal-assay/assay/engine/fault"
)

// Contract codes carried by Error.
const (
	CodeMissing     = "RECORD_MISSING"     // no foundry-run.yml: the run predates the protocol
	CodeUnparseable = "RECORD_UNPARSEABLE" // the file exists but is not YAML (typically a crash mid-write)
	CodeInvalid     = "RECORD_INVALID"     // YAML, but not a version-1 run record
	CodeRunDir      = "RUN_DIR"            // the run directory itself cannot be used
	CodeAssembly    = "ASSEMBLY_INVALID"   // an _assembly.json roster that cannot drive a run
	CodePhase       = "PHASE_UNKNOWN"      // a phase number not in the roster
	CodeTransition  = "PHASE_STATE"        // an update the phase's current status does not allow
	CodeClosed      = "RECORD_CLOSED"      // an update after the run reached a final status
	CodeIncomplete  = "RECORD_INCOMPLETE"  // Complete before every phase is done or skipped
	CodeWrite       = "WRITE_FAILED"       // the atomic rewrite failed; the previous file stands
)

func errf(code, file, format string, a ...any) *fault.Error {
	return &fault.Error{Code: code, File: file, Message: fmt.Sprintf(format, a...)}
}
