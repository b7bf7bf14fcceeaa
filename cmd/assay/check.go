package main

import (
	"encoding/json"

	"github.com/algal-assay/assay/engine/bundle"
	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/store"
	"github.com/spf13/cobra"
)

// checkResult is the one-line JSON verdict of `assay check`.
type checkResult struct {
	OK     bool        `json:"ok"`
	Key    string      `json:"key,omitempty"`
	Digest string      `json:"digest,omitempty"`
	Cells  *int        `json:"cells,omitempty"`
	Error  *checkError `json:"error,omitempty"`
}

type checkError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func init() {
	register(func(c *cli) *cobra.Command {
		var modules, transports string
		cmd := &cobra.Command{
			Use:   "check MANIFEST|-",
			Short: "Admit an organism manifest: parse, normalize, digest and compile its embedding graph",
			Long: "Admit an algal.organism.v1 manifest and print {\"ok\":true,\"key\",\"digest\",\"cells\"},\n" +
				"or {\"ok\":false,\"error\":{\"code\",\"message\"}} and exit 1.\n" +
				"--modules DIR admits every *.algal.json in DIR so organism, repeat and each\n" +
				"cells can resolve their children by digest.",
			Args: cobra.ExactArgs(1),
			RunE: func(_ *cobra.Command, args []string) error {
				m, compiled, err := c.admitManifest(args[0], modules, transports)
				if err != nil {
					code := "INTERNAL"
					if c, ok := codeOf(err); ok {
						code = c
					}
					if werr := c.printCheck(checkResult{Error: &checkError{Code: code, Message: err.Error()}}); werr != nil {
						return werr
					}
					return reported(err)
				}
				n := len(compiled.Manifest.Cells)
				return c.printCheck(checkResult{OK: true, Key: m.Key, Digest: m.Digest, Cells: &n})
			},
		}
		cmd.Flags().StringVar(&modules, "modules", "", "directory of *.algal.json child manifests")
		cmd.Flags().StringVar(&transports, "transports", "", "transports JSON file: fetch children named with via on a local miss")
		return cmd
	})
}

func (c *cli) admitManifest(path, modules, transports string) (*manifest.Manifest, *manifest.Compiled, error) {
	var resolver manifest.MapResolver
	if modules != "" {
		r, err := manifest.LoadModules(modules)
		if err != nil {
			return nil, nil, err
		}
		resolver = r
	}
	var m *manifest.Manifest
	var err error
	if path == "-" {
		var data []byte
		if data, err = c.readAll(path, manifest.MaxManifestBytes); err == nil {
			m, err = manifest.Parse(data)
		}
	} else {
		m, err = manifest.ReadFile(path)
	}
	if err != nil {
		return nil, nil, err
	}
	opts := manifest.Options{}
	if resolver != nil {
		opts.Resolver = resolver
	}
	if transports != "" {
		// Children resolve from the modules first; only a miss goes to
		// the cell's transport.
		t, err := bundle.LoadTransports(transports)
		if err != nil {
			return nil, nil, err
		}
		st := store.NewMemStore()
		for _, v := range resolver {
			if _, err := st.Put(store.Manifests, v); err != nil {
				return nil, nil, err
			}
		}
		opts.Resolver = &bundle.Resolver{Store: st, Transports: t}
	}
	compiled, err := manifest.Compile(m, opts)
	if err != nil {
		return nil, nil, err
	}
	return m, compiled, nil
}

func (c *cli) printCheck(r checkResult) error {
	// Messages quote manifest text such as "gateway:<model>"; keep it
	// readable rather than HTML-escaped.
	enc := json.NewEncoder(c.stdout)
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}
