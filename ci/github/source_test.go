package github

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/fault/faulttest"
)

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestReadArtifact(t *testing.T) {
	t.Parallel()
	sha := strings.Repeat("ab", 20)
	for _, tc := range []struct {
		name    string
		files   map[string]string
		pr      int
		sha     string
		errCode string
		errText string
	}{
		{"pr-number", map[string]string{"comment.md": "hi", "pr-number": "42\n"}, 42, "", "", ""},
		{"pr.json", map[string]string{"comment.md": "hi", "pr.json": `{"number":7,"head_sha":"` + sha + `"}`}, 7, sha, "", ""},
		{"both agree", map[string]string{"comment.md": "hi", "pr.json": `{"number":7}`, "pr-number": "7"}, 7, "", "", ""},
		{"both disagree", map[string]string{"comment.md": "hi", "pr.json": `{"number":7}`, "pr-number": "8"}, 0, "", CodeArtifact, "says PR 7"},
		{"no number", map[string]string{"comment.md": "hi"}, 0, "", CodeArtifact, "neither"},
		{"no body", map[string]string{"pr-number": "1"}, 1, "", "", ""},
		{"zero", map[string]string{"comment.md": "hi", "pr-number": "0"}, 0, "", CodeArtifact, "positive"},
		{"negative", map[string]string{"comment.md": "hi", "pr-number": "-3"}, 0, "", CodeArtifact, "positive"},
		{"garbage", map[string]string{"comment.md": "hi", "pr-number": "12; rm -rf /"}, 0, "", CodeArtifact, "positive"},
		{"too big", map[string]string{"comment.md": "hi", "pr-number": "99999999999"}, 0, "", CodeArtifact, ""},
		{"json fraction", map[string]string{"comment.md": "hi", "pr.json": `{"number":1.5}`}, 0, "", CodeArtifact, "positive integer"},
		{"json string", map[string]string{"comment.md": "hi", "pr.json": `{"number":"5"}`}, 0, "", CodeArtifact, "positive integer"},
		{"json unknown", map[string]string{"comment.md": "hi", "pr.json": `{"number":5,"repo":"x/y"}`}, 0, "", CodeArtifact, "unknown member"},
		{"json dup", map[string]string{"comment.md": "hi", "pr.json": `{"number":5,"number":6}`}, 0, "", CodeArtifact, "not valid JSON"},
		{"bad sha", map[string]string{"comment.md": "hi", "pr.json": `{"number":5,"head_sha":"HEAD"}`}, 0, "", CodeArtifact, "head_sha"},
		// comment.md is never read: neither bytes nor size matter.
		{"bad utf8", map[string]string{"comment.md": "\xff\xfe", "pr-number": "1"}, 1, "", "", ""},
		{"oversize", map[string]string{"comment.md": strings.Repeat("x", MaxBodyBytes+1), "pr-number": "1"}, 1, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := ReadArtifact(writeFiles(t, tc.files))
			if tc.errCode != "" {
				faulttest.Want(t, err, tc.errCode)
				if !strings.Contains(err.Error(), tc.errText) {
					t.Fatalf("error %q lacks %q", err, tc.errText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.PR != tc.pr || a.HeadSHA != tc.sha {
				t.Fatalf("got %#v", a)
			}
		})
	}
}

func TestReadArtifactRefusesSymlinks(t *testing.T) {
	t.Parallel()
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("token"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"pr.json", "pr-number"} {
		files := map[string]string{"pr.json": `{"number":1}`, "pr-number": "1"}
		delete(files, name)
		dir := writeFiles(t, files)
		if err := os.Symlink(secret, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		_, err := ReadArtifact(dir)
		faulttest.Want(t, err, CodeArtifact)
		if !strings.Contains(err.Error(), "symbolic link") {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

func TestParseEvent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, payload string
		want          Event
		bad           bool
	}{
		{"pull_request", `{"action":"opened","number":12,"pull_request":{"number":12,"head":{"sha":"x"}},"repository":{"full_name":"acme/widgets"}}`,
			Event{Repo: "acme/widgets", PR: 12}, false},
		{"workflow_run fork", `{"workflow_run":{"id":9,"event":"pull_request","head_sha":"abc","html_url":"https://github.test/acme/widgets/actions/runs/9","pull_requests":[]},"repository":{"full_name":"acme/widgets"}}`,
			Event{Repo: "acme/widgets", RunEvent: "pull_request", RunHeadSHA: "abc", RunURL: "https://github.test/acme/widgets/actions/runs/9"}, false},
		{"workflow_run conclusion", `{"workflow_run":{"event":"pull_request","conclusion":"failure","head_sha":"abc"},"repository":{"full_name":"acme/widgets"}}`,
			Event{Repo: "acme/widgets", RunEvent: "pull_request", RunHeadSHA: "abc", RunConclusion: "failure"}, false},
		{"workflow_run odd conclusion", `{"workflow_run":{"event":"pull_request","conclusion":"**success** <b>"}}`,
			Event{RunEvent: "pull_request"}, false},
		{"workflow_run same repo", `{"workflow_run":{"event":"pull_request","pull_requests":[{"number":5}]},"repository":{"full_name":"acme/widgets"}}`,
			Event{Repo: "acme/widgets", PR: 5, RunEvent: "pull_request"}, false},
		{"workflow_run ambiguous", `{"workflow_run":{"event":"pull_request","pull_requests":[{"number":5},{"number":6}]}}`,
			Event{RunEvent: "pull_request"}, false},
		{"push", `{"ref":"refs/heads/main","repository":{"full_name":"acme/widgets"}}`, Event{Repo: "acme/widgets"}, false},
		{"wrong type", `{"pull_request":{"number":"12"}}`, Event{}, true},
		{"not json", `nope`, Event{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := ParseEvent([]byte(tc.payload))
			if tc.bad {
				faulttest.Want(t, err, CodeEvent)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if *ev != tc.want {
				t.Fatalf("got %#v want %#v", *ev, tc.want)
			}
		})
	}
}

func TestParseRepo(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, owner, name string
	}{
		{"acme/widgets", "acme", "widgets"},
		{"a-b/c.d_e", "a-b", "c.d_e"},
		{"acme", "", ""},
		{"acme/../x", "", ""},
		{"acme/..", "", ""},
		{"ac me/w", "", ""},
		{"acme/w?x=1", "", ""},
		{"/w", "", ""},
	} {
		o, n, err := ParseRepo(tc.in)
		if o != tc.owner || n != tc.name || (err != nil) != (tc.owner == "") {
			t.Errorf("ParseRepo(%q) = %q, %q, %v", tc.in, o, n, err)
		}
	}
}

func TestParsePRNumber(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int{"1": 1, "2147483647": 2147483647, "2147483648": 0, "01": 0, "+1": 0, " 1": 0, "": 0, "1e3": 0} {
		got, err := ParsePRNumber(in)
		if got != want || (err != nil) != (want == 0) {
			t.Errorf("ParsePRNumber(%q) = %d, %v", in, got, err)
		}
	}
}

func TestAppendStepSummary(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "summary.md")
	if err := os.WriteFile(path, []byte("earlier\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := AppendStepSummary(path, "## Verdict"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != "earlier\n## Verdict\n" {
		t.Fatalf("%q", got)
	}
}
