// Command assay is the thin command-line face of Assay: every verb parses its
// flags, calls one engine, harness or ci function, and prints the result.
package main

import (
	"os"

	// The executor backends built into Assay register themselves
	// (engine/effect's registry); the binary's tests get them here too.
	_ "github.com/algal-assay/assay/engine/effect/backends"
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
