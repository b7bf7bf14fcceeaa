package report

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Annotations renders a GitHub Actions "::error file=...::..." workflow
// command per file that does not verify, and a "::notice" per leftover.
// Paths under workspace (GITHUB_WORKSPACE, "" for none) are made relative
// to it, as annotations want repository paths.
func Annotations(e *Evidence, workspace string) []string {
	var out []string
	for _, x := range e.Files {
		if x.OK {
			continue
		}
		msg := fmt.Sprintf("%s does not verify: %s", x.Kind, x.Detail)
		out = append(out, "::error file="+escapeProperty(repoPath(x.Path, workspace))+"::"+escapeData(msg))
	}
	for _, l := range e.Leftovers {
		out = append(out, "::notice file="+escapeProperty(repoPath(l.Path, workspace))+"::"+escapeData(l.Kind+": "+l.Description))
	}
	return out
}

func repoPath(path, workspace string) string {
	if workspace != "" {
		if abs, err := filepath.Abs(path); err == nil {
			if rel, err := filepath.Rel(workspace, abs); err == nil && !strings.HasPrefix(rel, "..") {
				return filepath.ToSlash(rel)
			}
		}
	}
	return filepath.ToSlash(path)
}

// escapeData and escapeProperty follow the workflow-command encoding, so
// a path or message can neither end the command nor inject another.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
