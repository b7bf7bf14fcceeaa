package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const cliChild = `{"contract":"algal.organism.v1","key":"organism:echo-child","name":"E",
 "interface":{"inputs":{"q":{"cell":"src","port":"v"}},"outputs":{"out":{"cell":"echo","port":"value"}}},
 "cells":[{"id":"src","kind":"input","outputs":{"v":"text"}},{"id":"echo","kind":"fn","fn":"echo.v1"}],
 "edges":[{"from":{"cell":"src","port":"v"},"to":{"cell":"echo","port":"value"}}]}`

func TestBundlePackUnpackAndTransports(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	child := putFile(t, dir, "child.algal.json", cliChild)
	cd := checkedDigest(t, child)
	src := filepath.Join(dir, "src")
	bundles := filepath.Join(dir, "bundles")
	if err := os.Mkdir(bundles, 0o755); err != nil {
		t.Fatal(err)
	}
	hex := strings.TrimPrefix(cd, "sha256:")
	bfile := filepath.Join(bundles, hex+".bundle.json")
	code, out, errb := runCLI(t, "bundle", "pack", child, "--dir", src, "--out", bfile)
	if code != 0 {
		t.Fatalf("pack: %s", errb)
	}
	if s := decodeObject(t, out); s["root"] != cd || s["manifests"] != 1.0 {
		t.Fatalf("pack summary %s", out)
	}
	// Unpack into another store, then the root runs from it.
	dst := filepath.Join(dir, "dst")
	code, out, errb = runCLI(t, "bundle", "unpack", bfile, "--dir", dst)
	if code != 0 || decodeObject(t, out)["root"] != cd {
		t.Fatalf("unpack: %s %s", out, errb)
	}
	if _, err := os.Stat(filepath.Join(dst, "manifests", hex+".json")); err != nil {
		t.Fatal("root not installed")
	}
	// A parent reaching the child over a transport file.
	parent := putFile(t, dir, "parent.algal.json", `{"contract":"algal.organism.v1","key":"organism:parent","name":"P",
	 "cells":[{"id":"in","kind":"input","outputs":{"q":"text"}},{"id":"svc","kind":"organism","manifest":"`+cd+`","via":"far"}],
	 "edges":[{"from":{"cell":"in","port":"q"},"to":{"cell":"svc","port":"q"}}]}`)
	tr := putFile(t, dir, "transports.json", `{"far":"bundles"}`)
	args := putFile(t, dir, "args.json", `{"in":{"q":"hi"}}`)
	code, _, _ = runCLI(t, "check", parent)
	if code == 0 {
		t.Fatal("check without transports must miss the child")
	}
	if code, out, errb = runCLI(t, "check", parent, "--transports", tr); code != 0 || decodeObject(t, out)["ok"] != true {
		t.Fatalf("check --transports: %s %s", out, errb)
	}
	st := filepath.Join(dir, "run-store")
	rpath := filepath.Join(dir, "receipt.json")
	code, out, errb = runCLI(t, "run", parent, "--args", args, "--dir", st, "--transports", tr, "--out", rpath)
	if code != 0 {
		t.Fatalf("run: %s", errb)
	}
	rec := decodeObject(t, out)
	svc := rec["cells"].(map[string]any)["svc"].(map[string]any)
	if rec["outcome"] != "complete" || svc["via"] != "far" {
		t.Fatalf("receipt: %s", out)
	}
	// Verify against a store that lacks the closure: only with
	// --transports (prefetch into an overlay) does the replay succeed.
	empty := filepath.Join(dir, "empty")
	if code, _, _ = runCLI(t, "verify", rpath, parent, "--dir", empty); code == 0 {
		t.Fatal("verify without the closure must fail")
	}
	if code, out, errb = runCLI(t, "verify", rpath, parent, "--dir", empty, "--transports", tr); code != 0 {
		t.Fatalf("verify --transports: %s %s", out, errb)
	}
	if _, err := os.Stat(filepath.Join(empty, "manifests")); err == nil {
		t.Fatal("verify wrote the store it reads")
	}
	// Missing transport, tampered and wrong-rooted bundles.
	code, _, errb = runCLI(t, "run", parent, "--args", args, "--transports", putFile(t, dir, "none.json", `{}`))
	if code != exitError || stderrCode(t, errb) != "STORE_MISS" {
		t.Fatalf("missing transport: %d %s", code, errb)
	}
	data, _ := os.ReadFile(bfile)
	if err := os.WriteFile(bfile, []byte(strings.Replace(string(data), `"name":"E"`, `"name":"F"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errb = runCLI(t, "run", parent, "--args", args, "--transports", tr)
	if code != exitError || stderrCode(t, errb) != "DIGEST_MISMATCH" {
		t.Fatalf("tampered: %d %s", code, errb)
	}
	code, _, errb = runCLI(t, "bundle", "unpack", bfile, "--dir", filepath.Join(dir, "x"))
	if code != exitError || stderrCode(t, errb) != "DIGEST_MISMATCH" {
		t.Fatalf("unpack tampered: %d %s", code, errb)
	}
	// A FIFO given as the bundle path is refused without blocking.
	code, _, errb = runCLI(t, "bundle", "unpack", putFIFO(t, dir, "fifo.bundle.json"), "--dir", filepath.Join(dir, "x"))
	if code != exitError || stderrCode(t, errb) != "IO_FAILED" {
		t.Fatalf("fifo: %d %s", code, errb)
	}
	// pack of a manifest whose child is absent: STORE_MISS.
	code, _, errb = runCLI(t, "bundle", "pack", parent, "--dir", filepath.Join(dir, "bare"))
	if code != exitError || stderrCode(t, errb) != "STORE_MISS" {
		t.Fatalf("pack incomplete: %d %s", code, errb)
	}
}

func TestUpstreamBundleUnpacksAndRootRuns(t *testing.T) {
	t.Parallel()
	ex := upstreamExamples(t, "the upstream bundle")
	dir := t.TempDir()
	st := filepath.Join(dir, "store")
	entries, _ := os.ReadDir(filepath.Join(ex, "bundles"))
	if len(entries) == 0 {
		t.Fatal("no upstream bundle")
	}
	bfile := filepath.Join(ex, "bundles", entries[0].Name())
	code, out, errb := runCLI(t, "bundle", "unpack", bfile, "--dir", st)
	if code != 0 {
		t.Fatalf("unpack: %s", errb)
	}
	root := decodeObject(t, out)["root"].(string)
	// Run the root straight from the store's copy.
	mfile := filepath.Join(st, "manifests", strings.TrimPrefix(root, "sha256:")+".json")
	args := putFile(t, dir, "args.json", `{"in":{"q":"what is a bundle?"}}`)
	resp := putFile(t, dir, "resp.json", `{"answer":"a closure"}`)
	code, out, errb = runCLI(t, "run", mfile, "--args", args, "--responses", resp, "--dir", st)
	if code != 0 {
		t.Fatalf("run: %s", errb)
	}
	rec := decodeObject(t, out)
	if rec["outcome"] != "complete" || rec["manifestDigest"] != root {
		t.Fatalf("root run: %s", out)
	}
	// The remote example reaches it over the upstream bundles directory.
	tr := putFile(t, dir, "transports.json", `{"bundles":"`+filepath.Join(ex, "bundles")+`"}`)
	rargs := putFile(t, dir, "rargs.json", `{"q":{"text":"hi"}}`)
	code, out, errb = runCLI(t, "run", filepath.Join(ex, "remote.algal.json"), "--args", rargs,
		"--responses", resp, "--transports", tr)
	if code != 0 || decodeObject(t, out)["outcome"] != "complete" {
		t.Fatalf("remote: %s %s", out, errb)
	}
}
