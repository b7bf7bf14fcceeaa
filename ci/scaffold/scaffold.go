// Package scaffold is the starter repository `assay init` writes: an
// organism and a constant baseline, a bench and a foundry workload over
// them, the Ginkgo suite file, the pull-request check and comment
// workflows, a .gitignore and, where there is none, a go.mod that requires
// Assay and declares it as a tool.
package scaffold

import (
	"embed"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/algal-assay/assay/engine/fault"
)

// files holds the files the scaffold writes. Names that Go or git would
// act on inside this module (a _test.go file, .gitignore) carry a .txt
// suffix here, dropped when written.
//
//go:embed all:initdata
var files embed.FS

// Module is the module a scaffolded repository requires.
const Module = "github.com/algal-assay/assay"

// GoVersion is the go line of a scaffold's go.mod: the one Assay's own
// go.mod declares (a test holds them equal). A lower one ("go 1.26" is
// below "go 1.26.0") is raised by the first go command that may write
// go.mod, which loads the whole module graph to do it.
const GoVersion = "1.26.0"

// Options shape a new go.mod; both are refused (ModuleExistsError) when the
// directory already has one.
type Options struct {
	// Module is the new module's path (default example.com/<dir's name>).
	Module string
	// Replace adds `replace <Module> => Replace` (a local Assay checkout).
	Replace string
}

// Written is what Write did: the files it wrote (slash-separated, sorted)
// and the commands a person runs next.
type Written struct {
	Files []string
	Next  []string
}

// ModuleExistsError is the error of Options given for a directory that
// already has a go.mod.
type ModuleExistsError struct{ Dir string }

func (e ModuleExistsError) Error() string { return e.Dir + " already has a go.mod" }

// Files lists the embedded files as target path -> content.
func Files() (map[string][]byte, error) {
	out := map[string][]byte{}
	err := fs.WalkDir(files, "initdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		target := strings.TrimSuffix(strings.TrimPrefix(p, "initdata/"), ".txt")
		if target == "gitignore" {
			target = ".gitignore"
		}
		out[target] = data
		return nil
	})
	return out, err
}

// version is the Assay version a new go.mod requires: this binary's own
// module version when it was built as a dependency (go install, go tool),
// else v0.0.0, which needs Options.Replace or a `go get` to resolve.
func version() (string, bool) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "v0.0.0", false
	}
	if bi.Main.Path == Module && strings.HasPrefix(bi.Main.Version, "v") {
		return bi.Main.Version, true
	}
	for _, m := range bi.Deps {
		if m.Path == Module && strings.HasPrefix(m.Version, "v") {
			return m.Version, true
		}
	}
	return "v0.0.0", false
}

var moduleSafe = regexp.MustCompile(`[^a-z0-9._-]+`)

// goMod is a new go.mod for the scaffold in abs.
func goMod(abs string, opts Options, version string) (string, error) {
	mod := opts.Module
	if mod == "" {
		name := strings.Trim(moduleSafe.ReplaceAllString(strings.ToLower(filepath.Base(abs)), "-"), "-.")
		if name == "" {
			name = "organisms"
		}
		mod = "example.com/" + name
	}
	var b strings.Builder
	fmt.Fprintf(&b, "module %s\n\ngo %s\n\nrequire %s %s\n\ntool %s/cmd/assay\n", mod, GoVersion, Module, version, Module)
	if opts.Replace != "" {
		r, err := filepath.Abs(opts.Replace)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "\nreplace %s => %s\n", Module, filepath.ToSlash(r))
	}
	return b.String(), nil
}

// Write scaffolds into dir. Existing files are never replaced: Write
// refuses, naming them, and writes nothing.
func Write(dir string, opts Options) (*Written, error) {
	all, err := Files()
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	_, statErr := os.Stat(filepath.Join(abs, "go.mod"))
	haveMod := statErr == nil
	version, released := version()
	switch {
	case !haveMod:
		mod, err := goMod(abs, opts, version)
		if err != nil {
			return nil, err
		}
		all["go.mod"] = []byte(mod)
	case opts.Module != "" || opts.Replace != "":
		return nil, ModuleExistsError{Dir: dir}
	}
	names := slices.Sorted(maps.Keys(all))
	if err := refuseExisting(dir, abs, names); err != nil {
		return nil, err
	}
	if err := writeAll(abs, names, all); err != nil {
		return nil, err
	}
	w := &Written{Next: nextSteps(dir, haveMod, released, opts.Replace != "")}
	for _, n := range names {
		w.Files = append(w.Files, path.Clean(n))
	}
	return w, nil
}

// refuseExisting fails, naming them, when any of names exists under abs.
func refuseExisting(dir, abs string, names []string) error {
	var exist []string
	for _, n := range names {
		if _, err := os.Lstat(filepath.Join(abs, filepath.FromSlash(n))); err == nil {
			exist = append(exist, n)
		}
	}
	if len(exist) > 0 {
		return &fault.Error{Code: fault.IOFailed, File: dir, Message: "init would replace " + strings.Join(exist, ", ") + "; move them aside or scaffold into another directory"}
	}
	return nil
}

// writeAll writes every named file under abs.
func writeAll(abs string, names []string, all map[string][]byte) error {
	for _, n := range names {
		p := filepath.Join(abs, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return &fault.Error{Code: fault.IOFailed, File: p, Message: err.Error()}
		}
		if err := os.WriteFile(p, all[n], 0o644); err != nil {
			return &fault.Error{Code: fault.IOFailed, File: p, Message: err.Error()}
		}
	}
	return nil
}

// nextSteps are the commands that take a fresh scaffold to a first run
// and a first pull-request check.
func nextSteps(dir string, haveMod, released, replaced bool) []string {
	var next []string
	if dir != "." {
		next = append(next, "cd "+dir)
	}
	if haveMod {
		next = append(next, "go get -tool "+Module+"/cmd/assay   # Assay as a tool of your module")
	} else if !released && !replaced {
		next = append(next, "go get "+Module+"@latest   # this assay is a development build: pick a released Assay")
	}
	return append(next,
		"go mod tidy             # resolve Assay and Ginkgo, write go.sum",
		"go tool assay run       # run suites/, write runs/, gate",
		"go test ./suites/...    # the same workloads as Ginkgo specs",
		"git add -A && git commit -m 'assay starter'   # pull requests now get the Assay check")
}
