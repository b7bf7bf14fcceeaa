package runrecord

import "fmt"

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

// Error is every error this package returns across its boundary.
type Error struct {
	Code string
	// File names the file concerned (record, assembly or run directory).
	File    string
	Message string
	Err     error
}

func (e *Error) Error() string {
	if e.File != "" {
		return fmt.Sprintf("%s: %s", e.File, e.Message)
	}
	return e.Message
}

// ErrorCode returns the contract code.
func (e *Error) ErrorCode() string { return e.Code }

func (e *Error) Unwrap() error { return e.Err }

func errf(code, file, format string, a ...any) *Error {
	return &Error{Code: code, File: file, Message: fmt.Sprintf(format, a...)}
}
