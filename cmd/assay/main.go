// Command assay is the thin command-line face of Assay: every verb parses its
// flags, calls one engine, harness or ci function, and prints the result.
package main

import "os"

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
