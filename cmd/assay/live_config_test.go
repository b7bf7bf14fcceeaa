package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/effect/openai/openaitest"
)

// liveConfigs writes a bench config of two systems and a foundry config
// of two candidates, every one on the triage classifier answered by
// openai:small-1, and returns their directory.
func liveConfigs(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src, err := os.ReadFile("../../fixtures/triage/triage-single.algal.json")
	if err != nil {
		t.Fatal(err)
	}
	putFile(t, dir, "one.algal.json", string(src))
	two := strings.Replace(string(src), `"key": "organism:assay-triage-single"`, `"key": "organism:assay-triage-two"`, 1)
	if two == string(src) {
		t.Fatal("the fixture's key moved; update the test")
	}
	putFile(t, dir, "two.algal.json", two)
	cases := `[{"id":"a","args":{"ticket":"charged twice"},"expect":{"queue":"billing"}},{"id":"b","args":{"ticket":"refund please"},"expect":{"queue":"billing"}}]`
	putFile(t, dir, "bench.json", `{"contract":"algal.bench.config.v1","cases":`+cases+`,
	 "systems":[{"id":"one","manifest":"one.algal.json","executors":{"cheap":"openai:small-1"}},
	            {"id":"two","manifest":"two.algal.json","executors":{"cheap":"openai:small-1"}}]}`)
	putFile(t, dir, "foundry.json", `{"contract":"algal.foundry.config.v1",
	 "candidates":["one.algal.json","two.algal.json"],"executors":{"cheap":"openai:small-1"},
	 "cases":[{"id":"t","split":"train","args":{"ticket":"charged twice"},"expect":{"queue":"billing"}},
	          {"id":"v","split":"validation","args":{"ticket":"refund please"},"expect":{"queue":"billing"}},
	          {"id":"h","split":"holdout","args":{"ticket":"invoice is wrong"},"expect":{"queue":"billing"}}]}`)
	return dir
}

// runConfig runs `assay VERB CONFIG` against the archive in dir.
func runConfig(t *testing.T, dir, verb string, args ...string) (int, string, string) {
	t.Helper()
	return runKeyless(t, append([]string{verb, filepath.Join(dir, verb+".json"), "--dir", filepath.Join(dir, ".algal"), "--archive", filepath.Join(dir, "receipts")}, args...)...)
}

// goOffline is CI's setting: no key, no server (fake's count starts
// again), and a fresh store in dir.
func goOffline(t *testing.T, fake *openaitest.Server, dir string) {
	t.Helper()
	fake.Reset()
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	if err := os.RemoveAll(filepath.Join(dir, ".algal")); err != nil {
		t.Fatal(err)
	}
}

// bench and foundry configs record and replay live answers exactly as
// workload runs do: --record all asks the server every request and
// archives the answers; --record none (no key, no server) reproduces the
// report byte for byte; a changed prompt is could-not-replay naming the
// cell and the command; --record missing asks only the changed requests.
func TestConfigCommandsRecordAndReplay(t *testing.T) {
	for _, tc := range []struct {
		verb string
		// asked: requests --record all sends; changed: those a prompt
		// change in two.algal.json makes (two's cases).
		asked, changed int
	}{
		{"bench", 4, 2},
		// Train and validation for both candidates, the holdout once on
		// the promoted one (the first in config order on a tie: one).
		{"foundry", 5, 2},
	} {
		t.Run(tc.verb, func(t *testing.T) {
			t.Setenv("CI", "")
			fake := openaitest.New(func(int, openaitest.Request) openaitest.Reply { return openaitest.Reply{Value: "billing"} })
			defer fake.Close()
			dir := liveConfigs(t)

			t.Setenv("OPENAI_BASE_URL", fake.BaseURL())
			t.Setenv("OPENAI_API_KEY", cliKey)
			code, recorded, errb := runConfig(t, dir, tc.verb, "--record", "all")
			if code != exitOK || fake.Count() != tc.asked {
				t.Fatalf("--record all: exit %d, %d requests (want %d)\n%s", code, fake.Count(), tc.asked, errb)
			}
			if _, err := os.Stat(filepath.Join(dir, "receipts", "index.jsonl")); err != nil {
				t.Fatalf("nothing archived: %v", err)
			}
			noKeyUnder(t, dir)

			// CI: no key, no server, a fresh store.
			goOffline(t, fake, dir)
			code, replayed, errb := runConfig(t, dir, tc.verb)
			if code != exitOK || fake.Count() != 0 || replayed != recorded {
				t.Fatalf("--record none: exit %d, %d requests, same report %v\n%s", code, fake.Count(), replayed == recorded, errb)
			}

			// A prompt change: nothing leaves the machine, the run names the
			// cell and the one command that records only those requests.
			p := filepath.Join(dir, "two.algal.json")
			src, _ := os.ReadFile(p)
			putFile(t, dir, "two.algal.json", strings.Replace(string(src), "Route this customer support ticket", "Route this support ticket", 1))
			code, out, errb := runConfig(t, dir, tc.verb)
			want := "record only these with: assay " + tc.verb + " " + filepath.Join(dir, tc.verb+".json") +
				" --archive " + filepath.Join(dir, "receipts") + " --dir " + filepath.Join(dir, ".algal") + " --record missing\n"
			if code != exitNo || fake.Count() != 0 || out != "" || !strings.Contains(errb, "could-not-replay") ||
				!strings.Contains(errb, `cell "route"`) || !strings.Contains(errb, "differs at prompt") || !strings.Contains(errb, want) {
				t.Fatalf("changed prompt: exit %d, %d requests, stdout %q\nstderr:\n%s\nwant %q", code, fake.Count(), out, errb, want)
			}

			// The command it printed asks only the changed requests.
			t.Setenv("OPENAI_API_KEY", cliKey)
			t.Setenv("OPENAI_BASE_URL", fake.BaseURL())
			if code, _, errb := runConfig(t, dir, tc.verb, "--record", "missing"); code != exitOK || fake.Count() != tc.changed {
				t.Fatalf("--record missing: exit %d, %d requests (want %d)\n%s", code, fake.Count(), tc.changed, errb)
			}
			fake.Reset()
			t.Setenv("OPENAI_API_KEY", "")
			t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
			if code, _, errb := runConfig(t, dir, tc.verb); code != exitOK || fake.Count() != 0 {
				t.Fatalf("replay after --record missing: exit %d, %d requests\n%s", code, fake.Count(), errb)
			}
			noKeyUnder(t, dir)
		})
	}
}

// A server that refuses the key and echoes it back, or answers a body
// that does not parse and carries it, fails the config commands without
// the key reaching stdout, stderr (runConfig checks both), the store or
// the archive.
func TestConfigServerFailureNeverLeaksTheKey(t *testing.T) {
	t.Setenv("CI", "")
	fake := openaitest.New(keyEchoingFailures)
	defer fake.Close()
	t.Setenv("OPENAI_BASE_URL", fake.BaseURL())
	t.Setenv("OPENAI_API_KEY", cliKey)
	for _, verb := range []string{"bench", "foundry"} {
		t.Run(verb, func(t *testing.T) {
			dir := liveConfigs(t)
			fake.Reset()
			// A refused call fails its case and the report is written, as
			// upstream's is; a request that got no answer then fails the
			// command (exit 1) naming it, and nothing is archived.
			code, out, errb := runConfig(t, dir, verb, "--record", "all")
			if code != exitNo || fake.Count() == 0 || strings.Contains(out, `"passed":true`) || !strings.Contains(out, `"passed":false`) ||
				!strings.Contains(errb, "live requests failed") || !strings.Contains(errb, "--record missing") {
				t.Fatalf("a server refusing every request: exit %d after %d requests\nstdout:\n%s\nstderr:\n%s", code, fake.Count(), out, errb)
			}
			if _, err := os.Stat(filepath.Join(dir, "receipts", "index.jsonl")); err == nil {
				if b, _ := os.ReadFile(filepath.Join(dir, "receipts", "index.jsonl")); len(b) > 0 {
					t.Errorf("failures were archived:\n%s", b)
				}
			}
			noKeyUnder(t, dir)
		})
	}
}

func TestConfigRecordingIsRefusedInCI(t *testing.T) {
	t.Setenv("CI", "true")
	dir := liveConfigs(t)
	for _, verb := range []string{"bench", "foundry"} {
		if code, _, errb := runConfig(t, dir, verb, "--record", "all"); code != exitError || !strings.Contains(errb, "CI") {
			t.Errorf("%s: exit %d, stderr %s", verb, code, errb)
		}
	}
}

// assay run MANIFEST takes named executors (--executor NAME=SPEC, and
// upstream's --executors FILE), and a live one records and replays as in
// workloads, keyed by the manifest and its args.
func TestRunManifestWithLiveExecutor(t *testing.T) {
	t.Setenv("CI", "")
	fake := openaitest.New(func(int, openaitest.Request) openaitest.Reply { return openaitest.Reply{Value: "billing"} })
	defer fake.Close()
	dir := liveConfigs(t)
	args := putFile(t, dir, "args.json", `{"inbox":{"ticket":"charged twice"}}`)
	execs := putFile(t, dir, "executors.json", `{"cheap":"openai:small-1"}`)
	runOne := func(extra ...string) (int, string, string) {
		t.Helper()
		return runKeyless(t, append([]string{"run", filepath.Join(dir, "one.algal.json"), "--args", args, "--archive", filepath.Join(dir, "receipts")}, extra...)...)
	}
	t.Setenv("OPENAI_BASE_URL", fake.BaseURL())
	t.Setenv("OPENAI_API_KEY", cliKey)
	code, recorded, errb := runOne("--executor", "cheap=openai:small-1", "--record", "all")
	if code != exitOK || fake.Count() != 1 || !strings.Contains(recorded, `"outputs":{"out":"billing"}`) {
		t.Fatalf("--record all: exit %d, %d requests\n%s%s", code, fake.Count(), recorded, errb)
	}
	noKeyUnder(t, dir)

	fake.Reset()
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	for _, flags := range [][]string{{"--executor", "cheap=openai:small-1"}, {"--executors", execs}} {
		if code, out, errb := runOne(flags...); code != exitOK || fake.Count() != 0 || out != recorded {
			t.Fatalf("replay with %v: exit %d, %d requests, same receipt %v\n%s", flags, code, fake.Count(), out == recorded, errb)
		}
	}

	other := putFile(t, dir, "other.json", `{"inbox":{"ticket":"refund please"}}`)
	code, out, errb := runCLI(t, "run", filepath.Join(dir, "one.algal.json"), "--args", other, "--executor", "cheap=openai:small-1", "--archive", filepath.Join(dir, "receipts"))
	want := "record only these with: assay run " + filepath.Join(dir, "one.algal.json") + " --archive " + filepath.Join(dir, "receipts") +
		" --args " + other + " --executor cheap=openai:small-1 --record missing\n"
	if code != exitNo || out != "" || !strings.Contains(errb, "could-not-replay") || !strings.HasSuffix(errb, want) {
		t.Fatalf("new args: exit %d, stdout %q\nstderr:\n%s\nwant suffix %q", code, out, errb, want)
	}

	for _, bad := range [][]string{{"--executor", "cheap"}, {"--executor", "che ap=openai:x"}, {"--executor", "cheap=ftp:x"}, {"--executor", "cheap=openai:x", "--executor", "cheap=cmd:true"}} {
		if code, _, errb := runOne(bad...); code != exitError || !strings.Contains(errb, "--executor") {
			t.Errorf("%v: exit %d, stderr %s", bad, code, errb)
		}
	}
}

// `assay foundry search CONFIG` takes --record and --archive as `assay
// foundry CONFIG` does: a live generator (openai:) is asked once per
// generation under --record all, every generation's generator run is
// archived under its own name, --record none replays the report byte
// for byte with no key and no server, and a changed generator prompt is
// could-not-replay naming the one command that records only those
// requests.
func TestFoundrySearchRecordsAndReplays(t *testing.T) {
	t.Setenv("CI", "")
	organism := func(key, prog string) json.RawMessage { return json.RawMessage(echoManifest(key, prog)) }
	fake := openaitest.New(func(n int, r openaitest.Request) openaitest.Reply {
		// The first generation hears no feedback; the next one does.
		if inputs, _ := r.Context()["inputs"].(map[string]any); inputs["feedback"] == nil {
			return openaitest.Reply{Value: map[string]any{"list": []any{organism("constant", `"alpha"`)}}}
		}
		return openaitest.Reply{Value: map[string]any{"list": []any{organism("echo", `["get","v"]`)}}}
	})
	defer fake.Close()
	dir := t.TempDir()
	putFile(t, dir, "evolver.algal.json", evolverOrganism)
	putFile(t, dir, "search.json", `{"contract":"algal.foundry.config.v1",
	 "generator":{"manifest":"evolver.algal.json","args":{"task":"echo the value"},"output":"proposals","field":"list"},
	 "executors":{"writer":"openai:small-1"},
	 "search":{"maxGenerations":2,"feedbackInput":"feedback"},
	 "cases":[`+echoSplits+`]}`)
	search := func(args ...string) (int, string, string) {
		return runKeyless(t, append([]string{"foundry", "search", filepath.Join(dir, "search.json"), "--dir", filepath.Join(dir, ".algal"), "--archive", filepath.Join(dir, "receipts")}, args...)...)
	}

	t.Setenv("OPENAI_BASE_URL", fake.BaseURL())
	t.Setenv("OPENAI_API_KEY", cliKey)
	code, recorded, errb := search("--record", "all")
	if code != exitOK || fake.Count() != 2 || !strings.Contains(recorded, `"algal.search.v1"`) {
		t.Fatalf("--record all: exit %d, %d requests (want one per generation)\n%s\n%s", code, fake.Count(), recorded, errb)
	}
	index, err := os.ReadFile(filepath.Join(dir, "receipts", "index.jsonl"))
	if err != nil {
		t.Fatalf("nothing archived: %v", err)
	}
	for _, name := range []string{`"contender":"gen-00-generator"`, `"contender":"gen-01-generator"`} {
		if !strings.Contains(string(index), name) {
			t.Errorf("index.jsonl lacks %s:\n%s", name, index)
		}
	}
	noKeyUnder(t, dir)

	// No key, no server, a fresh store: the same bytes.
	goOffline(t, fake, dir)
	if code, replayed, errb := search(); code != exitOK || fake.Count() != 0 || replayed != recorded {
		t.Fatalf("--record none: exit %d, %d requests, same report %v\n%s", code, fake.Count(), replayed == recorded, errb)
	}

	// A changed generator prompt: nothing leaves the machine.
	src, _ := os.ReadFile(filepath.Join(dir, "evolver.algal.json"))
	putFile(t, dir, "evolver.algal.json", strings.Replace(string(src), "Propose organisms;", "Propose organisms now;", 1))
	code, out, errb := search()
	want := "record only these with: assay foundry search " + filepath.Join(dir, "search.json") +
		" --archive " + filepath.Join(dir, "receipts") + " --dir " + filepath.Join(dir, ".algal") + " --record missing\n"
	if code != exitNo || fake.Count() != 0 || out != "" || !strings.Contains(errb, "could-not-replay") || !strings.Contains(errb, `cell "writer"`) || !strings.Contains(errb, want) {
		t.Fatalf("changed prompt: exit %d, %d requests, stdout %q\nstderr:\n%s\nwant %q", code, fake.Count(), out, errb, want)
	}
	t.Setenv("OPENAI_API_KEY", cliKey)
	t.Setenv("OPENAI_BASE_URL", fake.BaseURL())
	if code, _, errb := search("--record", "missing"); code != exitOK || fake.Count() != 2 {
		t.Fatalf("--record missing: exit %d, %d requests (want the 2 changed ones)\n%s", code, fake.Count(), errb)
	}
	noKeyUnder(t, dir)
}
