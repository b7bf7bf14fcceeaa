package main

import (
	"embed"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/spf13/cobra"
)

// scaffold holds the files `assay init` writes. Names that Go or git
// would act on inside this module (a _test.go file, .gitignore) carry a
// .txt suffix here, dropped when written.
//
//go:embed all:initdata
var scaffold embed.FS

// assayModule is the module a scaffolded repository requires.
const assayModule = "github.com/algal-assay/assay"

type initFlags struct {
	module  string
	replace string
}

// newInitCmd is `assay init [DIR]`.
func newInitCmd(c *cli) *cobra.Command {
	var f initFlags
	cmd := &cobra.Command{
		Use:   "init [DIR]",
		Short: "Scaffold a starter organism, a bench and a foundry workload, the Ginkgo suite and the PR workflows",
		Long: "Write into DIR (default .) a starter organism and a constant baseline (organisms/), a bench and a\n" +
			"foundry workload over them (suites/), the Ginkgo suite file (suites/suite_test.go), the PR check\n" +
			"and PR comment workflows (.github/workflows/), a .gitignore and, when DIR holds no go.mod, a go.mod\n" +
			"that requires Assay and declares it as a tool (go tool assay). Existing files are never replaced:\n" +
			"init refuses, naming them. The result passes `go tool assay run` and `go test ./suites/...` at once.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			return c.initRepo(dir, f)
		},
	}
	cmd.Flags().StringVar(&f.module, "module", "", "module path of a new go.mod (default example.com/<DIR's name>)")
	cmd.Flags().StringVar(&f.replace, "replace", "", "add `replace "+assayModule+" => DIR` to a new go.mod (a local Assay checkout)")
	return cmd
}

// scaffoldFiles lists the embedded files as target path -> content.
func scaffoldFiles() (map[string][]byte, error) {
	out := map[string][]byte{}
	err := fs.WalkDir(scaffold, "initdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := scaffold.ReadFile(p)
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

// assayVersion is the Assay version a new go.mod requires: this binary's
// own module version when it was built as a dependency (go install, go
// tool), else v0.0.0, which needs --replace or a `go get` to resolve.
func assayVersion() (string, bool) {
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Path == assayModule && strings.HasPrefix(bi.Main.Version, "v") {
			return bi.Main.Version, true
		}
		for _, m := range bi.Deps {
			if m.Path == assayModule && strings.HasPrefix(m.Version, "v") {
				return m.Version, true
			}
		}
	}
	return "v0.0.0", false
}

var moduleSafe = regexp.MustCompile(`[^a-z0-9._-]+`)

// scaffoldGo is the go line of a scaffold's go.mod: the one Assay's own
// go.mod declares (a test holds them equal). A lower one ("go 1.26" is
// below "go 1.26.0") is raised by the first go command that may write
// go.mod, which loads the whole module graph to do it.
const scaffoldGo = "1.26.0"

func (c *cli) initRepo(dir string, f initFlags) error {
	files, err := scaffoldFiles()
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	_, statErr := os.Stat(filepath.Join(abs, "go.mod"))
	haveMod := statErr == nil
	version, released := assayVersion()
	if !haveMod {
		mod := f.module
		if mod == "" {
			name := strings.Trim(moduleSafe.ReplaceAllString(strings.ToLower(filepath.Base(abs)), "-"), "-.")
			if name == "" {
				name = "organisms"
			}
			mod = "example.com/" + name
		}
		var b strings.Builder
		fmt.Fprintf(&b, "module %s\n\ngo %s\n\nrequire %s %s\n\ntool %s/cmd/assay\n", mod, scaffoldGo, assayModule, version, assayModule)
		if f.replace != "" {
			r, err := filepath.Abs(f.replace)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "\nreplace %s => %s\n", assayModule, filepath.ToSlash(r))
		}
		files["go.mod"] = []byte(b.String())
	} else if f.module != "" || f.replace != "" {
		return usagef("%s already has a go.mod: --module and --replace only shape a new one", dir)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	var exist []string
	for _, n := range names {
		if _, err := os.Lstat(filepath.Join(abs, filepath.FromSlash(n))); err == nil {
			exist = append(exist, n)
		}
	}
	if len(exist) > 0 {
		return &fault.Error{Code: fault.IOFailed, File: dir, Message: "init would replace " + strings.Join(exist, ", ") + "; move them aside or scaffold into another directory"}
	}
	for _, n := range names {
		p := filepath.Join(abs, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return &fault.Error{Code: fault.IOFailed, File: p, Message: err.Error()}
		}
		if err := os.WriteFile(p, files[n], 0o644); err != nil {
			return &fault.Error{Code: fault.IOFailed, File: p, Message: err.Error()}
		}
	}
	var next []string
	if dir != "." {
		next = append(next, "cd "+dir)
	}
	if haveMod {
		next = append(next, "go get -tool "+assayModule+"/cmd/assay   # Assay as a tool of your module")
	} else if !released && f.replace == "" {
		next = append(next, "go get "+assayModule+"@latest   # this assay is a development build: pick a released Assay")
	}
	next = append(next,
		"go mod tidy             # resolve Assay and Ginkgo, write go.sum",
		"go tool assay run       # run suites/, write runs/, gate",
		"go test ./suites/...    # the same workloads as Ginkgo specs",
		"git add -A && git commit -m 'assay starter'   # pull requests now get the Assay check")
	wrote := make([]any, len(names))
	for i, n := range names {
		wrote[i] = path.Clean(n)
	}
	steps := make([]any, len(next))
	for i, n := range next {
		steps[i] = n
	}
	return c.answer(map[string]any{"dir": dir, "files": wrote, "next": steps}, func(w io.Writer) error {
		fmt.Fprintf(w, "assay init: wrote %d files in %s\n", len(names), dir)
		for _, n := range wrote {
			fmt.Fprintf(w, "  %s\n", n)
		}
		fmt.Fprintln(w, "\nNext:")
		for _, n := range next {
			fmt.Fprintf(w, "  %s\n", n)
		}
		return nil
	})
}
