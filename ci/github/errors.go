package github

import "fmt"

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

// Error is the typed error every exported function of this package returns.
type Error struct {
	Code    string
	Status  int // HTTP status for API errors, 0 otherwise
	Message string
	Err     error // underlying cause, if any
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %v", e.Message, e.Err)
	}
	return e.Message
}

// ErrorCode returns the stable code, for the CLI's JSON error shape.
func (e *Error) ErrorCode() string { return e.Code }

func (e *Error) Unwrap() error { return e.Err }

func errorf(code string, format string, a ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, a...)}
}
