package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
)

// locateBase is a small admissible organism laid out one field a line, so
// the positions in TestMistakesLocated can be read off it.
const locateBase = `{
  "contract": "algal.organism.v1",
  "key": "organism:locate-me",
  "name": "locate me",
  "interface": {
    "inputs": { "ticket": { "cell": "inbox", "port": "ticket" } },
    "outputs": { "queue": { "cell": "route", "port": "out" } }
  },
  "cells": [
    { "id": "inbox", "kind": "input", "outputs": { "ticket": "text" } },
    {
      "id": "route",
      "kind": "classifier",
      "inputs": { "ticket": "text" },
      "prompt": "Route it.",
      "output": { "kind": "choice", "labels": ["billing", "other"] }
    }
  ],
  "edges": [
    { "from": { "cell": "inbox", "port": "ticket" }, "to": { "cell": "route", "port": "ticket" } }
  ]
}
`

// A mistake inside an organism file names the file, the line and column of
// the member at fault, the field path, and a did-you-mean where one is
// likely; structural mistakes come from ReadFile, graph mistakes from
// Compile located by LocateFile. The message after the position is the
// contract's message unchanged, plus the hint.
func TestMistakesLocated(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, old, new string
		code, want     string
	}{
		{"kind typo", `"kind": "classifier"`, `"kind": "classifer"`, fault.Parse,
			`13:15: cells[1] "route": kind: unknown cell kind "classifer" (did you mean "classifier"?)`},
		{"unknown cell key", `"prompt":`, `"promt":`, fault.Parse,
			`15:7: cells[1] "route": unknown key "promt" (did you mean "prompt"?)`},
		{"unknown top-level key", `"name":`, `"nmae":`, fault.Parse,
			`4:3: unknown key "nmae" (did you mean "name"?)`},
		{"unknown key, nothing close", `"name": "locate me",`, `"name": "locate me", "colour": 1,`, fault.Parse,
			`4:24: unknown key "colour"`},
		{"budget typo", `"name": "locate me",`, `"name": "locate me", "budgets": { "maxStep": 4 },`, fault.Parse,
			`4:37: budgets: unknown key "maxStep" (did you mean "maxSteps"?)`},
		{"wrong type", `"labels": ["billing", "other"]`, `"labels": "billing"`, fault.Parse,
			`16:47: cells[1] "route": output.labels: expected array, got text`},
		{"missing field", `"prompt": "Route it.",`, ``, fault.Parse,
			`11:5: cells[1] "route": prompt: required text is missing`},
		{"unknown port type", `"outputs": { "ticket": "text" }`, `"outputs": { "ticket": "txt" }`, fault.Parse,
			`10:62: cells[0] "inbox": outputs.ticket.type: unknown port type "txt" (did you mean "text"?)`},
		{"output kind typo", `{ "kind": "choice", "labels"`, `{ "kind": "choise", "labels"`, fault.Parse,
			`16:27: cells[1] "route": output.kind: unknown output kind "choise" (did you mean "choice"?)`},
		{"edge to a missing port", `"to": { "cell": "route", "port": "ticket" }`, `"to": { "cell": "route", "port": "tickt" }`, fault.ManifestInvalid,
			`20:87: edges[0].to: cell "route" has no input port "tickt" (did you mean "ticket"?)`},
		{"edge from a missing cell", `"from": { "cell": "inbox"`, `"from": { "cell": "inbx"`, fault.ManifestInvalid,
			`20:25: edges[0].from: unknown producer cell "inbx" (did you mean "inbox"?)`},
		{"interface names a missing cell", `"cell": "route", "port": "out"`, `"cell": "rout", "port": "out"`, fault.InterfaceMismatch,
			`7:37: interface.outputs.queue: names missing cell "rout" (did you mean "route"?)`},
		{"interface names a missing port", `"cell": "route", "port": "out"`, `"cell": "route", "port": "outt"`, fault.InterfaceMismatch,
			`7:54: interface.outputs.queue: cell "route" has no output port "outt" (did you mean "out"?)`},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(locateBase, c.old) {
				t.Fatalf("%q is not in the base manifest", c.old)
			}
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".algal.json")
			if err := os.WriteFile(path, []byte(strings.Replace(locateBase, c.old, c.new, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			m, err := ReadFile(path)
			if err == nil {
				_, err = Compile(m, Options{})
				err = LocateFile(path, err)
			}
			e, ok := fault.As(err)
			if !ok {
				t.Fatalf("admitted, or not a fault: %v", err)
			}
			if e.Code != c.code || e.Error() != path+":"+c.want {
				t.Errorf("got  %s %s\nwant %s %s:%s", e.Code, e.Error(), c.code, path, c.want)
			}
		})
	}
}

// The base manifest itself is admissible, so every mistake above is the
// only one in its file.
func TestLocateBaseAdmits(t *testing.T) {
	t.Parallel()
	m, err := Parse([]byte(locateBase))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Compile(m, Options{}); err != nil {
		t.Fatal(err)
	}
}

// A spawned manifest's rejection (ParseValue, no file) keeps the message
// the contract fixes, with the hint kept apart.
func TestHintStaysOutOfMessage(t *testing.T) {
	t.Parallel()
	_, err := Parse([]byte(strings.Replace(locateBase, `"prompt":`, `"promt":`, 1)))
	e, ok := fault.As(err)
	if !ok {
		t.Fatalf("not a fault: %v", err)
	}
	if e.Message != `cells[1] "route": unknown key "promt"` || e.Hint != ` (did you mean "prompt"?)` || e.Line != 0 {
		t.Errorf("message %q, hint %q, line %d", e.Message, e.Hint, e.Line)
	}
}
