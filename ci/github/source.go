package github

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

// MaxBodyBytes bounds a report file (comment.md or --body): 1 MiB, the size
// of a job summary, far above the 65,536-character comment.
const MaxBodyBytes = 1 << 20

// maxEventBytes bounds the Actions event payload, which embeds PR texts.
const maxEventBytes = 32 << 20

// maxPRFileBytes bounds pr.json and pr-number.
const maxPRFileBytes = 4096

// Artifact is the pull request an artifact names (layout in the package
// documentation). Its comment.md is deliberately not part of it: that text
// was written by pull-request code, and the comment workflow composes its
// own from the evidence (ci/artifact) instead of posting it.
type Artifact struct {
	PR      int
	HeadSHA string // "" when pr.json does not give it
}

// Artifact file names.
const (
	ArtifactBody     = "comment.md"
	ArtifactPRJSON   = "pr.json"
	ArtifactPRNumber = "pr-number"
)

var shaPattern = regexp.MustCompile(`^(?:[0-9a-f]{40}|[0-9a-f]{64})$`)

// ReadArtifact reads which pull request and commit the artifact directory
// dir names (pr.json, pr-number). Its content comes from pull-request
// code, so everything is checked: regular files only (no symbolic links),
// bounded sizes, a positive PR number, a well-formed SHA.
func ReadArtifact(dir string) (*Artifact, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, &fault.Error{Code: CodeArtifact, Message: "artifact directory " + dir, Err: err}
	}
	if !st.IsDir() {
		return nil, errorf(CodeArtifact, "artifact %s is not a directory", dir)
	}
	a := &Artifact{}
	fromJSON, sha, err := readPRJSON(filepath.Join(dir, ArtifactPRJSON))
	if err != nil {
		return nil, err
	}
	a.HeadSHA = sha
	fromNum, err := readPRNumber(filepath.Join(dir, ArtifactPRNumber))
	if err != nil {
		return nil, err
	}
	switch {
	case fromJSON == 0 && fromNum == 0:
		return nil, errorf(CodeArtifact, "artifact %s has neither %s nor %s", dir, ArtifactPRJSON, ArtifactPRNumber)
	case fromJSON != 0 && fromNum != 0 && fromJSON != fromNum:
		return nil, errorf(CodeArtifact, "artifact %s: %s says PR %d but %s says %d", dir, ArtifactPRJSON, fromJSON, ArtifactPRNumber, fromNum)
	case fromJSON != 0:
		a.PR = fromJSON
	default:
		a.PR = fromNum
	}
	return a, nil
}

// readPRJSON reads pr.json's number and head commit; 0 when the artifact
// has no pr.json.
func readPRJSON(path string) (int, string, error) {
	data, err := readRegular(path, maxPRFileBytes, false)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, "", nil
	}
	if err != nil {
		return 0, "", artifactFileError(path, err)
	}
	return parsePRJSON(data)
}

// readPRNumber reads pr-number, one number on a line; 0 when the
// artifact has no pr-number.
func readPRNumber(path string) (int, error) {
	data, err := readRegular(path, maxPRFileBytes, false)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, artifactFileError(path, err)
	}
	n, err := ParsePRNumber(strings.TrimSuffix(strings.TrimSuffix(string(data), "\n"), "\r"))
	if err != nil {
		return 0, errorf(CodeArtifact, "%s: %v", path, err)
	}
	return n, nil
}

func artifactFileError(path string, err error) error {
	var e *fault.Error
	if errors.As(err, &e) {
		return err
	}
	return &fault.Error{Code: CodeArtifact, Message: path, Err: err}
}

func parsePRJSON(data []byte) (int, string, error) {
	v, err := canon.Parse(data, maxPRFileBytes)
	if err != nil {
		return 0, "", &fault.Error{Code: CodeArtifact, Message: ArtifactPRJSON + " is not valid JSON", Err: err}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return 0, "", errorf(CodeArtifact, "%s: want an object", ArtifactPRJSON)
	}
	for _, k := range canon.SortedKeys(obj) {
		if k != "number" && k != "head_sha" {
			return 0, "", errorf(CodeArtifact, "%s: unknown member %q (allowed: number, head_sha)", ArtifactPRJSON, k)
		}
	}
	f, ok := obj["number"].(float64)
	if !ok {
		return 0, "", errorf(CodeArtifact, "%s: number: want a positive integer", ArtifactPRJSON)
	}
	if f != float64(int64(f)) || f < 1 || f > maxPR {
		return 0, "", errorf(CodeArtifact, "%s: number %v: want a positive integer up to %d", ArtifactPRJSON, f, maxPR)
	}
	raw, present := obj["head_sha"]
	if !present {
		return int(f), "", nil
	}
	sha, ok := raw.(string)
	if !ok || !shaPattern.MatchString(sha) {
		return 0, "", errorf(CodeArtifact, "%s: head_sha: want 40 or 64 lowercase hex digits", ArtifactPRJSON)
	}
	return int(f), sha, nil
}

// maxPR is the largest issue number GitHub can hand out (a 32-bit integer).
const maxPR = 1<<31 - 1

// ParsePRNumber parses a pull-request number written in plain decimal: no
// sign, no leading zero, no spaces, 1 to 2^31-1.
func ParsePRNumber(s string) (int, error) {
	if s == "" || s[0] == '0' || len(s) > 10 || strings.Trim(s, "0123456789") != "" {
		return 0, errorf(CodeInput, "pull request number %q: want a positive decimal integer", truncateForMessage(s))
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > maxPR {
		return 0, errorf(CodeInput, "pull request number %q: want a positive integer up to %d", s, maxPR)
	}
	return int(n), nil
}

func truncateForMessage(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// ReadBody reads a report file given on the command line: at most
// MaxBodyBytes of UTF-8. Unlike artifact files it may be a symbolic link,
// since the operator chose the path.
func ReadBody(path string) (string, error) { return readBodyFile(path, true) }

func readBodyFile(path string, followLinks bool) (string, error) {
	data, err := readRegular(path, MaxBodyBytes, followLinks)
	if err != nil {
		var e *fault.Error
		if errors.As(err, &e) {
			return "", err
		}
		return "", &fault.Error{Code: CodeInput, Message: "report " + path, Err: err}
	}
	if !utf8.Valid(data) {
		return "", errorf(CodeInput, "report %s is not valid UTF-8", path)
	}
	return string(data), nil
}

// readRegular reads a regular file of at most max bytes. Without
// followLinks, a symbolic link is refused, and the opened file is checked to
// be the one inspected so it cannot be swapped in between.
func readRegular(path string, max int64, followLinks bool) ([]byte, error) {
	before, err := inspect(path, max, followLinks)
	if err != nil {
		return nil, err
	}
	// O_NONBLOCK: a file swapped for a FIFO after the Lstat must not block
	// the open; the descriptor is checked to be the file inspected.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	after, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !os.SameFile(before, after) {
		return nil, errorf(CodeInput, "%s changed while being opened", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, errorf(CodeInput, "%s is over the limit of %d bytes", path, max)
	}
	return data, nil
}

// inspect stats path (through a symbolic link only with followLinks) and
// admits a regular file of at most max bytes.
func inspect(path string, max int64, followLinks bool) (fs.FileInfo, error) {
	stat := os.Lstat
	if followLinks {
		stat = os.Stat
	}
	before, err := stat(path)
	if err != nil {
		return nil, err
	}
	if before.Mode()&fs.ModeSymlink != 0 {
		return nil, errorf(CodeArtifact, "%s is a symbolic link; artifact files must be regular files", path)
	}
	if !before.Mode().IsRegular() {
		return nil, errorf(CodeInput, "%s is not a regular file", path)
	}
	if before.Size() > max {
		return nil, errorf(CodeInput, "%s is %d bytes, over the limit of %d bytes", path, before.Size(), max)
	}
	return before, nil
}

// Event holds what the comment step needs from the Actions event payload
// (the JSON file at GITHUB_EVENT_PATH).
type Event struct {
	Repo string // repository.full_name
	// PR is pull_request.number (pull_request and pull_request_target
	// events), or, for workflow_run, the single entry of
	// workflow_run.pull_requests; 0 when the payload names no PR (a
	// workflow_run for a fork PR lists none: the artifact supplies it).
	PR int
	// The triggering run, for workflow_run events.
	RunEvent   string // workflow_run.event, e.g. "pull_request"
	RunHeadSHA string // workflow_run.head_sha: the commit the check ran on
	RunURL     string // workflow_run.html_url: where its summary and artifact are
	// RunConclusion is workflow_run.conclusion as GitHub reports it
	// (success, failure, cancelled, ...): the one verdict about the check
	// that pull-request code cannot write. "" when absent or not a plain
	// lowercase word.
	RunConclusion string
}

var conclusionPattern = regexp.MustCompile(`^[a-z_]{1,32}$`)

// ParseEvent extracts an Event from a payload. Only the members named in
// Event are read; their types are checked.
func ParseEvent(data []byte) (*Event, error) {
	var raw struct {
		Number      *int `json:"number"`
		PullRequest *struct {
			Number int `json:"number"`
		} `json:"pull_request"`
		Repository *struct {
			FullName string `json:"full_name"`
		} `json:"repository"`
		WorkflowRun *struct {
			Event        string `json:"event"`
			HeadSHA      string `json:"head_sha"`
			Conclusion   string `json:"conclusion"`
			HTMLURL      string `json:"html_url"`
			PullRequests []struct {
				Number int `json:"number"`
			} `json:"pull_requests"`
		} `json:"workflow_run"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&raw); err != nil {
		return nil, &fault.Error{Code: CodeEvent, Message: "event payload is not the expected JSON", Err: err}
	}
	ev := &Event{}
	if raw.Repository != nil {
		ev.Repo = raw.Repository.FullName
	}
	switch {
	case raw.PullRequest != nil:
		ev.PR = raw.PullRequest.Number
	case raw.Number != nil && raw.WorkflowRun == nil:
		ev.PR = *raw.Number
	}
	if w := raw.WorkflowRun; w != nil {
		ev.RunEvent, ev.RunHeadSHA, ev.RunURL = w.Event, w.HeadSHA, w.HTMLURL
		if conclusionPattern.MatchString(w.Conclusion) {
			ev.RunConclusion = w.Conclusion
		}
		if ev.PR == 0 && len(w.PullRequests) == 1 {
			ev.PR = w.PullRequests[0].Number
		}
	}
	if ev.PR < 0 || ev.PR > maxPR {
		return nil, errorf(CodeEvent, "event payload: pull request number %d out of range", ev.PR)
	}
	return ev, nil
}

// ReadEvent reads and parses the payload file at path (GITHUB_EVENT_PATH).
func ReadEvent(path string) (*Event, error) {
	data, err := readRegular(path, maxEventBytes, true)
	if err != nil {
		var e *fault.Error
		if errors.As(err, &e) {
			e.Code = CodeEvent
			return nil, e
		}
		return nil, &fault.Error{Code: CodeEvent, Message: "event payload " + path, Err: err}
	}
	return ParseEvent(data)
}

var (
	ownerPattern = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$`)
	namePattern  = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)
)

// ParseRepo splits "OWNER/NAME" (GITHUB_REPOSITORY's form) and checks both
// parts against GitHub's naming rules, so neither can alter the API path.
func ParseRepo(s string) (owner, name string, err error) {
	o, n, ok := strings.Cut(s, "/")
	if !ok || !ownerPattern.MatchString(o) || !namePattern.MatchString(n) || n == "." || n == ".." {
		return "", "", errorf(CodeInput, "repository %q: want OWNER/NAME", truncateForMessage(s))
	}
	return o, n, nil
}

// AppendStepSummary appends markdown to the job summary file (the path in
// GITHUB_STEP_SUMMARY), ending it with a newline.
func AppendStepSummary(path, markdown string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return &fault.Error{Code: CodeInput, Message: "job summary " + path, Err: err}
	}
	if !strings.HasSuffix(markdown, "\n") {
		markdown += "\n"
	}
	_, werr := f.WriteString(markdown)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		return &fault.Error{Code: CodeInput, Message: "job summary " + path, Err: err}
	}
	return nil
}
