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
func renderOptions(opts Options, headSHA string) diff.RenderOptions {
	ro := diff.RenderOptions{Pointer: opts.Pointer, Command: reproduceCommand(opts)}
	if ro.Pointer == "" {
		ro.Pointer = DefaultPointer()
	}
	server, repo := os.Getenv("GITHUB_SERVER_URL"), os.Getenv("GITHUB_REPOSITORY")
	if server != "" && repo != "" && headSHA != "" {
		ro.BlobBase = server + "/" + repo + "/blob/" + headSHA + "/"
	}
	if opts.Artifact != "" {
		ro.Drawn = "`" + ArtifactHTML + "` in the `" + ArtifactName + "` artifact"
		if u := checkRunURL(); u != "" {
			ro.Drawn += " of [the check run](" + u + ")"
		}
	}
	return ro
}

func reproduceCommand(opts Options) string {
	ref := baseRef(opts.BaseRef)
	cmd := "assay ci pr"
	if ref != "" {
		cmd += " --base-ref " + ref
	}
	if len(opts.Paths) > 0 && !slices.Equal(opts.Paths, DefaultPaths) {
		cmd += " " + strings.Join(opts.Paths, " ")
	}
	return cmd
}
