package effect

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
)

func cmdRecord(t *testing.T, line string, req Request, maxEffect time.Duration) Record {
	t.Helper()
	c, err := NewCommand("adapter", line, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := NewRouter(c).Effect(context.Background(), req, maxEffect)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func TestCommandProtocol(t *testing.T) {
	t.Parallel()
	req := request("c", KindGate, nil)
	d, _ := canon.Digest(req)
	// stdin carries exactly the canonical request bytes
	rec := cmdRecord(t, "cat", req, 0)
	if rec.Err != nil || encode(t, rec.Output) != encode(t, req) {
		t.Fatalf("echo: %+v", rec.Value())
	}
	if !rec.NotRetryable || rec.ConfigurationDigest == "" || rec.Executor != "adapter" {
		t.Fatalf("command records always carry retryable:false and configurationDigest: %+v", rec.Value())
	}
	wantCfg, _ := canon.Digest(map[string]any{"kind": "command", "argv": []any{"sh", "-c", "cat"}, "cwd": nil, "timeoutMs": 120000.0})
	if rec.ConfigurationDigest != wantCfg {
		t.Fatal("configurationDigest does not bind argv/cwd/timeout")
	}
	cases := []struct {
		name, line string
		code, msg  string
	}{
		{"json", `cat >/dev/null; printf '{"label":"ok"}'`, "", ""},
		{"suspend", "cat >/dev/null; exit 75", fault.EffectSuspended, "executor asked the host to suspend the run"},
		{"non-zero", "cat >/dev/null; echo secret >&2; exit 3", fault.EffectFailed, "host executable failed; diagnostics withheld"},
		{"bad json", "cat >/dev/null; echo not json", fault.EffectUnparseable, "command output is not JSON"},
		{"empty stdout", "cat >/dev/null", fault.EffectUnparseable, "command output is not JSON"},
		{"signal", "kill -9 $$", fault.EffectFailed, "host executable was terminated by a signal; external completion may be uncertain"},
		{"output over budget", `cat >/dev/null; head -c 5000 /dev/zero | tr '\0' a | sed 's/.*/"&"/'`, fault.BudgetExhausted, "effect output exceeds maxOutputBytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := cmdRecord(t, c.line, req, 0)
			if c.code == "" {
				if rec.Err != nil || encode(t, rec.Output) != `{"label":"ok"}` {
					t.Fatalf("%+v", rec.Value())
				}
				return
			}
			if rec.Err == nil || rec.Err.Code != c.code || rec.Err.Message != c.msg || !rec.NotRetryable || rec.RequestDigest != d {
				t.Fatalf("got %+v", rec.Value())
			}
		})
	}
}

// outlives reports whether the process whose pid the adapter wrote to
// pidFile is still running (not a zombie) after a grace period: SIGKILL
// is asynchronous, so the check polls rather than looking once.
func outlives(t *testing.T, pidFile string) bool {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("adapter did not record its background pid: %v", err)
	}
	statPath := "/proc/" + strings.TrimSpace(string(b)) + "/stat"
	for range 100 {
		stat, err := os.ReadFile(statPath)
		if err != nil {
			return false
		}
		// The state follows the parenthesised command name.
		s := string(stat)
		if f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]); len(f) == 0 || f[0] == "Z" {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}

func TestCommandTimeoutKillsGroup(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	rec := cmdRecord(t, "sleep 30 & echo $! >"+pidFile+"; sleep 30; echo 1", request("c", KindAgent, nil), 300*time.Millisecond)
	if rec.Err == nil || rec.Err.Code != fault.BudgetExhausted || !rec.NotRetryable {
		t.Fatalf("timeout: %+v", rec.Value())
	}
	if outlives(t, pidFile) {
		t.Fatal("the adapter's background child survived the timeout")
	}
}

// An adapter that answers and exits while a background child it started
// still holds stdout gets its answer recorded, and the child does not
// outlive the effect.
func TestCommandReapsLeftoverChildren(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	rec := cmdRecord(t, `cat >/dev/null; sleep 30 & echo $! >`+pidFile+`; printf '"ok"'`, request("c", KindAgent, nil), 0)
	if rec.Err != nil || rec.Output != "ok" {
		t.Fatalf("answer lost to a lingering child: %+v", rec.Value())
	}
	if outlives(t, pidFile) {
		t.Fatal("the adapter's background child outlived the effect")
	}
}

func TestCommandClosedStdin(t *testing.T) {
	t.Parallel()
	req := request("c", KindAgent, nil)
	req["prompt"] = strings.Repeat("p", 600_000) // larger than any pipe buffer
	rec := cmdRecord(t, `exec 0<&-; sleep 0.2; echo 1`, req, 0)
	if rec.Err == nil || rec.Err.Message != "executor closed stdin before request delivery" {
		t.Fatalf("closed stdin: %+v", rec.Value())
	}
}

func TestCommandCannotStart(t *testing.T) {
	t.Parallel()
	c, _ := NewCommand("adapter", "cat", filepath.Join(t.TempDir(), "gone"), 0)
	rec, _ := NewRouter(c).Effect(context.Background(), request("c", KindAgent, nil), 0)
	if rec.Err == nil || rec.Err.Code != fault.EffectUnbound || rec.Err.Message != "host executable could not be started" {
		t.Fatalf("start failure: %+v", rec.Value())
	}
	if _, err := NewCommand("x", "", "", 0); fault.CodeOf(err) != fault.Parse {
		t.Fatal("empty command line admitted")
	}
}

func TestApprovals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "approvals.json")
	a := NewApprovals(path)
	model := &fake{id: "model", desc: Descriptor{Effects: ModelEffects}}
	r := NewRouter(model, a)
	ctx := context.Background()
	gate := request("ship", KindGate, nil)

	rec, _ := r.Effect(ctx, gate, 0)
	if rec.Err == nil || rec.Err.Code != fault.EffectSuspended || !rec.NotRetryable || rec.Executor != ApprovalsID {
		t.Fatalf("no file yet: %+v", rec.Value())
	}
	writeFile(t, path, `{"other":"approve"}`)
	rec, _ = r.Effect(ctx, gate, 0)
	if rec.Err == nil || rec.Err.Code != fault.EffectSuspended || !strings.Contains(rec.Err.Message, `"ship"`) {
		t.Fatalf("absent gate: %+v", rec.Value())
	}
	writeFile(t, path, `{"ship":"approve"}`)
	rec, _ = r.Effect(ctx, gate, 0)
	if rec.Err != nil || rec.Output != "approve" {
		t.Fatalf("decided gate: %+v", rec.Value())
	}
	// approvals never serve other kinds, and models never serve gates
	if got := served(t, r, request("ship", KindAgent, nil)); got != "model" {
		t.Fatalf("agent went to %s", got)
	}
	if got := served(t, NewRouter(model), gate); got != UnboundExecutor {
		t.Fatalf("gate reached %s", got)
	}
	writeFile(t, path, `{"ship":1}`)
	if rec, _ := r.Effect(ctx, gate, 0); rec.Err == nil || rec.Err.Code != fault.EffectUnparseable {
		t.Fatalf("non-label decision: %+v", rec.Value())
	}
	if _, err := a.Execute(ctx, request("ship", KindAgent, nil)); fault.CodeOf(err) != fault.EffectUnbound {
		t.Fatalf("direct non-gate: %v", err)
	}
	os.Remove(path)
}
