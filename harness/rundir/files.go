package rundir

// The files a run leaves in its run directory besides the config (package
// workload names it and the part and repeat files) and the run record
// (package runrecord).
const (
	ReportFile       = "report.json"
	BudgetFile       = "budget.json" // the exhausted habitat account, written instead of a report
	VerificationFile = "verification.json"
	GateFile         = "gate.json"
	SummaryFile      = "summary.md"
)
