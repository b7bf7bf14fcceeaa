package prcheck

import (
	"os"
	"slices"
	"strings"

	"github.com/algal-assay/assay/ci/diff"
)

// ArtifactHTML is the drawn report in the artifact (see ci/diff.HTML).
const ArtifactHTML = diff.ArtifactHTML

// renderOptions say how the comment ends: the command that reproduces the
// check, links to the head files it names (at the pull request's head
// commit, when the event names it) and where pr.html is.
func renderOptions(opts Options, pointer, headSHA string) diff.RenderOptions {
	ro := diff.RenderOptions{Pointer: pointer, Command: reproduceCommand(opts)}
	server, repo, id := os.Getenv("GITHUB_SERVER_URL"), os.Getenv("GITHUB_REPOSITORY"), os.Getenv("GITHUB_RUN_ID")
	if server != "" && repo != "" && headSHA != "" {
		ro.BlobBase = server + "/" + repo + "/blob/" + headSHA + "/"
	}
	if opts.Artifact != "" {
		ro.Drawn = "`" + ArtifactHTML + "` in the `" + ArtifactName + "` artifact"
		if server != "" && repo != "" && id != "" {
			ro.Drawn += " of [the check run](" + server + "/" + repo + "/actions/runs/" + id + ")"
		}
	}
	return ro
}

func reproduceCommand(opts Options) string {
	ref := opts.BaseRef
	if ref == "" {
		if b := os.Getenv("GITHUB_BASE_REF"); b != "" {
			ref = "origin/" + b
		}
	}
	cmd := "assay ci pr"
	if ref != "" {
		cmd += " --base-ref " + ref
	}
	if len(opts.Paths) > 0 && !slices.Equal(opts.Paths, DefaultPaths) {
		cmd += " " + strings.Join(opts.Paths, " ")
	}
	return cmd
}
