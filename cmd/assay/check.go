package main

import (
	"fmt"

	"github.com/algal-assay/assay/engine/manifest"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// checkFlags are check's flags, upstream's spelling.
type checkFlags struct {
	modules, transports, dir, tools string
}

func newCheckCmd(c *cli) *cobra.Command {
	var f checkFlags
	cmd := &cobra.Command{
		Use:   "check MANIFEST|-",
		Short: "Admit an organism manifest: parse, normalize, digest and compile its embedding graph",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			m, compiled, err := c.admitManifest(args[0], f)
			if err != nil {
				return err
			}
			n := len(compiled.Manifest.Cells)
			if c.readable() {
				_, err := fmt.Fprintf(c.stdout, "admitted %s: %d cells\nmanifestDigest %s\n", m.Key, n, m.Digest)
				return err
			}
			return c.emit(map[string]any{"ok": true, "manifestDigest": m.Digest, "digest": m.Digest, "key": m.Key, "cells": float64(n)}, "")
		},
	}
	f.add(cmd.Flags())
	return cmd
}

// addStore declares where the children of an admitted manifest resolve
// from: --modules and --dir.
func (f *checkFlags) addStore(fl *pflag.FlagSet) {
	fl.StringVar(&f.modules, "modules", "", "`DIR` of *.algal.json child manifests")
	fl.StringVar(&f.dir, "dir", store.DefaultDir, "file store `DIR` children resolve from (read only)")
}

// add declares check's flags: addStore's, --transports and --tools.
func (f *checkFlags) add(fl *pflag.FlagSet) {
	f.addStore(fl)
	fl.StringVar(&f.transports, "transports", "", "transports `FILE`: fetch children named with via on a local miss")
	fl.StringVar(&f.tools, "tools", "", "host tool registry `FILE` typing tool cells")
}

// admitManifest reads the manifest at path ("-": standard input) and
// admits it with its embedding graph (vm.Admit) through an overlay of
// --dir and --modules.
func (c *cli) admitManifest(path string, f checkFlags) (*manifest.Manifest, *manifest.Compiled, error) {
	_, st, err := vm.OpenOverlay(f.dir, f.modules)
	if err != nil {
		return nil, nil, err
	}
	var m *manifest.Manifest
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
	compiled, err := vm.Admit(m, vm.AdmitOptions{Store: st, Transports: f.transports, Tools: f.tools})
	if err != nil {
		if path != "-" {
			err = manifest.LocateFile(path, err)
		}
		return nil, nil, err
	}
	return m, compiled, nil
}
