// Package workroot finds the root of the project the working directory
// is inside, as go finds a module and git a work tree.
package workroot

import (
	"os"
	"path/filepath"
)

// Above finds the nearest go.mod, or else the nearest .git, at or above
// the working directory: ok only when that root is an ancestor, not the
// working directory itself.
func Above() (string, bool) {
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for _, marker := range []string{"go.mod", ".git"} {
		if dir, found := nearest(wd, marker); found {
			return dir, dir != wd
		}
	}
	return "", false
}

// Git is the nearest directory at or above the working directory holding
// .git, else the working directory ("." when it cannot be read).
func Git() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	if dir, found := nearest(wd, ".git"); found {
		return dir
	}
	return wd
}

// nearest is the nearest directory at or above dir holding marker.
func nearest(dir, marker string) (string, bool) {
	for {
		if _, err := os.Stat(filepath.Join(dir, marker)); err == nil {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}
