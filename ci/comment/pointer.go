package comment

import (
	"os"
	"regexp"

	"github.com/algal-assay/assay/ci/artifact"
	ghci "github.com/algal-assay/assay/ci/github"
)

// pointerText says where the full report is: the artifact this run
// uploads (--out), rendered by this binary from the verified evidence;
// without one, the check run's evidence and the command that re-derives
// the report from it. Never the check's own renderings: pull-request code
// wrote them.
func pointerText(flag string, out bool, ev *ghci.Event) string {
	if flag != "" {
		return flag
	}
	if out {
		return "The full report, rendered by the comment workflow from the verified evidence: the " + verifiedArtifact() + "."
	}
	url := checkRunURL(ev)
	run := "the check run"
	if url != "" {
		run = "[the check run](" + url + ")"
	}
	return "The evidence is the artifact of " + run + "; `assay ci verify` of it re-derives the full report."
}

// bodyPointer ends a --body report that had to be cut: the check run's
// job summary and artifact hold the rest.
func bodyPointer(flag string, ev *ghci.Event) string {
	if flag != "" {
		return flag
	}
	url := checkRunURL(ev)
	if url == "" {
		return "The full report is in the job summary and the uploaded artifact of the check run."
	}
	return "The full report is in the job summary and the uploaded artifact of [the check run](" + url + ")."
}

// thisRunURL is the Actions run this process belongs to, "" outside one.
func thisRunURL() string {
	server, repo, id := os.Getenv("GITHUB_SERVER_URL"), os.Getenv("GITHUB_REPOSITORY"), os.Getenv("GITHUB_RUN_ID")
	if server != "" && repo != "" && id != "" {
		return server + "/" + repo + "/actions/runs/" + id
	}
	return ""
}

// checkRunURL is the run the report is of: the workflow_run event's, else
// this run's.
func checkRunURL(ev *ghci.Event) string {
	if ev.RunURL != "" {
		return ev.RunURL
	}
	return thisRunURL()
}

// verifiedArtifact names the artifact this run uploads (--out), linking
// the run when the Actions environment identifies it.
func verifiedArtifact() string {
	if url := thisRunURL(); url != "" {
		return "`" + artifact.VerifiedName + "` artifact of [this comment workflow's run](" + url + ")"
	}
	return "`" + artifact.VerifiedName + "` artifact of this comment workflow's run"
}

// footer is what ends the posted comment: the command that reproduces the
// check (against the branch the comment workflow runs on, the default
// branch pull requests target) and links to the head files at the checked
// commit. It never points at the check's uploaded pr.html: pull-request
// code wrote that file, and this binary did not render it.
func footer(repo, headSHA string) (command, blobBase string) {
	command = "assay ci pr --base-ref origin/" + firstNonEmpty(os.Getenv("GITHUB_REF_NAME"), "main")
	if shaHex.MatchString(headSHA) {
		blobBase = firstNonEmpty(os.Getenv("GITHUB_SERVER_URL"), "https://github.com") + "/" + repo + "/blob/" + headSHA + "/"
	}
	return command, blobBase
}

var shaHex = regexp.MustCompile(`^(?:[0-9a-f]{40}|[0-9a-f]{64})$`)

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
