package github

import (
	"fmt"

	"github.com/algal-assay/assay/engine/fault"
)

// Error codes carried by [Error].
const (
	CodeCannotComment = "COMMENT_FORBIDDEN" // the token may not read or write the PR's comments (403/404)
	CodeAPI           = "GITHUB_API"        // any other GitHub API failure
	CodeTooLong       = "COMMENT_TOO_LONG"  // a body over the comment limit reached Post
	CodeArtifact      = "ARTIFACT_INVALID"  // the check job's artifact breaks the layout
	CodeEvent         = "EVENT_INVALID"     // the Actions event payload or environment is unusable
	CodeToken         = "TOKEN_MISSING"     // no GITHUB_TOKEN
	CodeInput         = "INPUT_INVALID"     // a body file, repository name or marker key is unusable
	CodeRedirect      = "REDIRECT_REFUSED"  // the API redirected to another host; the token was not sent there
)

func errorf(code string, format string, a ...any) *fault.Error {
	return &fault.Error{Code: code, Message: fmt.Sprintf(format, a...)}
}
