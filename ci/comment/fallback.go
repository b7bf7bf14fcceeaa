package comment

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"

	ghci "github.com/algal-assay/assay/ci/github"
	"github.com/algal-assay/assay/engine/fault"
)

// Fallback reports through the job instead of the pull request: a warning
// annotation, the report in the log, and the report appended to the job
// summary. It returns nil: a token that may not comment (a fork's) is
// expected and must not fail the check.
func Fallback(stdout io.Writer, target, reason, body string) error {
	fmt.Fprintf(stdout, "::warning title=assay ci comment::%s\n",
		EscapeWorkflowData(fmt.Sprintf("cannot comment on %s (%s); the report is in the job log and the job summary", target, reason)))
	// The report may come from pull-request code: stop the runner from
	// reading workflow commands inside it while it is printed.
	var tok [16]byte
	_, _ = rand.Read(tok[:])
	stop := hex.EncodeToString(tok[:])
	fmt.Fprintf(stdout, "::stop-commands::%s\n%s", stop, body)
	if !strings.HasSuffix(body, "\n") {
		fmt.Fprintln(stdout)
	}
	fmt.Fprintf(stdout, "::%s::\n", stop)
	if path := os.Getenv("GITHUB_STEP_SUMMARY"); path != "" {
		return ghci.AppendStepSummary(path, body)
	}
	return nil
}

// EscapeWorkflowData encodes a workflow-command message so it stays on one
// line and cannot end the command early.
func EscapeWorkflowData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// PostPR posts the check's own comment for same-repository use (`assay ci
// pr --post`), to the pull request pr of GITHUB_REPOSITORY. A token that
// may not comment is not a failure: the report is in the job summary, and
// the answer says "skipped" and why.
func PostPR(ctx context.Context, stdout io.Writer, pr int, body string) (map[string]any, error) {
	if pr == 0 {
		return nil, &fault.Error{Code: ghci.CodeEvent, Message: "--post: no pull request number in the event payload (GITHUB_EVENT_PATH)"}
	}
	owner, name, err := ghci.ParseRepo(os.Getenv("GITHUB_REPOSITORY"))
	if err != nil {
		return nil, err
	}
	client, err := ghci.NewClient(os.Getenv("GITHUB_TOKEN"), os.Getenv("GITHUB_API_URL"), nil)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, PostTimeout)
	defer cancel()
	marker, _ := ghci.Marker(ghci.DefaultKey)
	action, url, err := ghci.Post(ctx, client, owner, name, pr, marker, body)
	if ghci.CannotComment(err) {
		fmt.Fprintf(stdout, "::warning title=assay ci pr::%s\n", EscapeWorkflowData("cannot comment ("+err.Error()+"); the report is in the job summary and the artifact"))
		return map[string]any{"action": "skipped", "reason": err.Error()}, nil
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"action": action, "url": url}, nil
}
