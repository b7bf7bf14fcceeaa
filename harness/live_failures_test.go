package harness

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/algal-assay/assay/engine/effect/openai/openaitest"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness/archive"
)

// runBench runs the live bench workload of s once.
func runBench(t *testing.T, s liveSetup, mode archive.Mode, env map[string]string) *Outcome {
	t.Helper()
	wb, err := vm.NewWorkbench(s.store)
	if err != nil {
		t.Fatal(err)
	}
	w := loadWorkload(t, filepath.Join(s.root, "live-triage.bench.yaml"))
	o, _ := Run(context.Background(), w, Options{Runner: wb, Store: wb, Out: s.out, Record: mode, Archive: s.archive,
		Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if o == nil {
		t.Fatal("no outcome")
	}
	return o
}

func archived(t *testing.T, dir string) []archive.Entry {
	t.Helper()
	a, err := archive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	e, err := a.Entries()
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// Issue 28, first bullet: a --record all in which every request fails is
// a failed run naming each failed request (system, case, cell, status,
// the server's message with the key redacted), nothing is archived, and
// once the server is fixed --record missing asks exactly those requests.
func TestLiveFailuresAreNeverArchived(t *testing.T) {
	t.Parallel()
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://" + dead.Addr().String() + "/v1"
	dead.Close() // connection refused from now on
	cases := []struct {
		name  string
		reply openaitest.Reply
		want  string
	}{
		{"500", openaitest.Reply{Status: 500, Headers: map[string]string{"Retry-After": "0"}, Message: "upstream exploded for " + liveKey}, "HTTP 500: EFFECT_FAILED: provider returned HTTP 500 after the configured retries: upstream exploded for [REDACTED]"},
		{"429", openaitest.Reply{Status: 429, Headers: map[string]string{"Retry-After": "0"}}, "HTTP 429: EFFECT_FAILED: provider returned HTTP 429 (rate limited) after the configured retries: Rate limit reached"},
		{"401", openaitest.Reply{Status: 401, Message: "Incorrect API key provided: " + liveKey}, "HTTP 401: EFFECT_FAILED: provider refused the credentials (HTTP 401): Incorrect API key provided: [REDACTED]"},
		{"307", openaitest.Reply{Status: 307, Redirect: "https://elsewhere.example/v1/chat/completions"}, "redirected to another origin: refused"},
		{"timeout", openaitest.Reply{}, "BUDGET_EXHAUSTED: provider request timed out"},
		{"refused", openaitest.Reply{}, "provider request failed: no response"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := openaitest.New(func(int, openaitest.Request) openaitest.Reply { return tc.reply })
			defer fake.Close()
			base := fake.BaseURL()
			if tc.name == "refused" {
				base = deadURL
			}
			s := writeLiveWorkloads(t, base)
			if tc.name == "timeout" {
				fake.Latency = 2 * time.Second
				setBackendKey(t, s, "max-concurrency: 4", "max-concurrency: 4, timeout-ms: 50, max-retries: 0")
				setBackendKey(t, s, "temperature: 0", "temperature: 0, timeout-ms: 50, max-retries: 0")
			}
			o := runBench(t, s, archive.All, map[string]string{"OPENAI_API_KEY": liveKey})
			if o.Passed() || fault.CodeOf(o.Err) != CodeLiveFailed {
				t.Fatalf("err %v (code %q), want %s", o.Err, fault.CodeOf(o.Err), CodeLiveFailed)
			}
			var fe *FailedError
			if !errors.As(o.Err, &fe) || len(fe.Failures) < 4 {
				t.Fatalf("err %v: want every failed request named", o.Err)
			}
			msg := o.Err.Error()
			for _, want := range []string{tc.want, `system "single" case "double-charge" cell "route" (executor cheap)`, "assay run", "--record missing"} {
				if !strings.Contains(msg, want) {
					t.Errorf("failure lacks %q:\n%s", want, msg)
				}
			}
			if strings.Contains(msg, liveKey) {
				t.Errorf("the key is in the error:\n%s", msg)
			}
			if e := archived(t, s.archive); len(e) != 0 {
				t.Errorf("failures were archived: %+v", e)
			}
			requireNoKey(t, s.store, s.out)
		})
	}

	// The server recovers: --record missing asks what failed, and passes.
	failing := true
	fake := openaitest.New(nil)
	defer fake.Close()
	good := triageAnswer("small-1")
	fake.Answer = func(n int, r openaitest.Request) openaitest.Reply {
		if failing {
			return openaitest.Reply{Status: 503, Headers: map[string]string{"Retry-After": "0"}}
		}
		return good(n, r)
	}
	s := writeLiveWorkloads(t, fake.BaseURL())
	env := map[string]string{"OPENAI_API_KEY": liveKey}
	if o := runBench(t, s, archive.All, env); o.Passed() {
		t.Fatal("a run whose server fails passed")
	}
	failing = false
	fake.Reset()
	if o := runBench(t, s, archive.Missing, env); !o.Passed() {
		t.Fatalf("--record missing after the server recovered: %v", o.Err)
	}
	if fake.Count() == 0 {
		t.Fatal("--record missing treated the failures as answered")
	}
	if e := archived(t, s.archive); len(e) != 8 {
		t.Errorf("%d entries archived, want the 8 case runs", len(e))
	}
}

func setBackendKey(t *testing.T, s liveSetup, old, new string) {
	t.Helper()
	path := filepath.Join(s.root, "live-triage.bench.yaml")
	b, _ := os.ReadFile(path)
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%q not in the workload", old)
	}
	if err := os.WriteFile(path, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Issue 28, second bullet: an answer holding the key is redacted before
// anything is written, the index says so, and the redacted answer replays
// exactly.
func TestLiveAnswerEchoingTheKeyIsRedactedEverywhere(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(func(n int, r openaitest.Request) openaitest.Reply {
		rep := triageAnswer("small-1")(n, r)
		if r.Prompt != "" && strings.Contains(r.Prompt, "Route") {
			rep.Model = "small-1-" + liveKey
		}
		return rep
	})
	defer fake.Close()
	s := writeLiveWorkloads(t, fake.BaseURL())
	o := runBench(t, s, archive.All, map[string]string{"OPENAI_API_KEY": liveKey})
	if o.Err != nil {
		t.Fatal(o.Err)
	}
	requireNoKey(t, s.store, s.out, s.archive)
	entries := archived(t, s.archive)
	red := 0
	for _, e := range entries {
		red += e.Redacted
	}
	if red == 0 {
		t.Errorf("no index entry records the redaction: %+v", entries)
	}
	fake.Close()
	if o := runBench(t, s, archive.None, nil); !o.Passed() {
		t.Fatalf("replay of redacted answers: %v", o.Err)
	}
}

// Issue 28, fourth bullet: a 10 MB answer to a cell whose contract allows
// far less is refused before it is archived.
func TestLiveOversizedAnswerIsNotArchived(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("billing ", 10<<20/8)
	fake := openaitest.New(func(int, openaitest.Request) openaitest.Reply { return openaitest.Reply{Value: big} })
	defer fake.Close()
	s := writeLiveWorkloads(t, fake.BaseURL())
	o := runBench(t, s, archive.All, map[string]string{"OPENAI_API_KEY": liveKey})
	if fault.CodeOf(o.Err) != CodeLiveFailed || !strings.Contains(o.Err.Error(), "answer refused") {
		t.Fatalf("err = %v", o.Err)
	}
	var total int64
	_ = filepath.WalkDir(s.archive, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if st, err := d.Info(); err == nil {
				total += st.Size()
			}
		}
		return nil
	})
	if total > 64<<10 {
		t.Errorf("archive holds %d bytes after refused answers", total)
	}
}

// Issue 28, fifth bullet: could-not-replay names the field that differs
// (model, host) and the system and case on every line; the archive holds
// no lock file and its files are 0644.
func TestLiveCouldNotReplayExplainsItself(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(triageAnswer("small-1"))
	defer fake.Close()
	s := writeLiveWorkloads(t, fake.BaseURL())
	if o := runBench(t, s, archive.All, map[string]string{"OPENAI_API_KEY": liveKey}); o.Err != nil {
		t.Fatal(o.Err)
	}
	err := filepath.WalkDir(s.archive, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && p != s.archive {
			t.Errorf("%s is in the archive", p)
		}
		if !d.IsDir() {
			st, _ := d.Info()
			if st.Mode().Perm() != 0o644 {
				t.Errorf("%s has mode %v, want 0644", p, st.Mode().Perm())
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(s.archive, store.WritersLock)); err == nil {
		t.Error("the writers' lock is inside the archive")
	}

	setBackendKey(t, s, "model: small-1", "model: small-2")
	o := runBench(t, s, archive.None, nil)
	var re *ReplayError
	if !errors.As(o.Err, &re) {
		t.Fatalf("err = %v", o.Err)
	}
	for _, line := range strings.Split(re.Error(), "\n")[1 : len(re.Misses)+1] {
		if !strings.Contains(line, `system "`) || !strings.Contains(line, `case "`) || !strings.Contains(line, `model "small-1" -> "small-2"`) {
			t.Errorf("line %q does not name the system, the case and the model change", line)
		}
	}
	setBackendKey(t, s, "model: small-2", "model: small-1")
	setBackendKey(t, s, "base-url: "+fake.BaseURL(), "base-url: http://localhost:1/v1")
	o = runBench(t, s, archive.None, nil)
	if !errors.As(o.Err, &re) || !strings.Contains(re.Error(), "host (base-url)") {
		t.Fatalf("host change: %v", o.Err)
	}
}

var _ = http.StatusOK

// Issue 28, third bullet: tokens the server reported for an answer that
// cannot be read are kept in the receipts and the report, not shown as 0.
func TestLiveUnparseableAnswerKeepsItsTokens(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(func(int, openaitest.Request) openaitest.Reply {
		c := "billing, probably"
		return openaitest.Reply{Content: &c, Model: "small-1-2026-06"}
	})
	defer fake.Close()
	s := writeLiveWorkloads(t, fake.BaseURL())
	setBackendKey(t, s, "gate:", "prices: { small-1-2026-06: { input: 1, output: 2 } }\ngate:")
	o := runBench(t, s, archive.All, map[string]string{"OPENAI_API_KEY": liveKey})
	if o.Bench == nil {
		t.Fatalf("no report: %v", o.Err)
	}
	for _, sys := range o.Bench.Systems {
		if sys.ID != "single" {
			continue
		}
		if sys.Usage.TokensIn == 0 || sys.Usage.TokensOut == 0 || sys.Usage.UnknownTokens != 0 {
			t.Errorf("single: usage %+v, want the reported tokens of the unreadable answers", sys.Usage)
		}
	}
	if e := archived(t, s.archive); len(e) == 0 || len(e[0].Rejected) == 0 {
		t.Errorf("an answer its contract rejected is archived and marked: %+v", e)
	}
}
