package harness

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/effect/openai/openaitest"
	"github.com/algal-assay/assay/engine/vm"
	"github.com/algal-assay/assay/harness/archive"
	"github.com/algal-assay/assay/harness/repeats"
	"github.com/algal-assay/assay/harness/rundir"
	"github.com/algal-assay/assay/harness/workload"
)

// flakyModel answers like triageAnswer, except that the single system's
// route cell, asked about the ambiguous totals ticket, says technical on
// its 1st, 3rd, ... asking and billing on the others: a model that is
// right two times in three. Repeats run one after another and each asks
// once, so asking n is repeat n.
func flakyModel() func(int, openaitest.Request) openaitest.Reply {
	base := triageAnswer("small-1")
	var mu sync.Mutex
	asked := map[string]int{}
	return func(n int, r openaitest.Request) openaitest.Reply {
		reply := base(n, r)
		inputs, _ := r.Context()["inputs"].(map[string]any)
		ticket, _ := inputs["ticket"].(string)
		if strings.Contains(ticket, "totals") && strings.HasPrefix(r.Prompt, "Route this customer support ticket") {
			mu.Lock()
			asked[r.Prompt+ticket]++
			i := asked[r.Prompt+ticket]
			mu.Unlock()
			if i%2 == 0 {
				reply.Value = "billing"
			}
		}
		return reply
	}
}

// runRepeatedLive runs the live bench with k repeats and returns
// the bytes of every file the repeats left, by name.
func runRepeatedLive(t *testing.T, s liveSetup, k, concurrency int, mode archive.Mode, env map[string]string) (map[string][]byte, *Outcome) {
	t.Helper()
	wb, err := vm.NewWorkbench(s.store)
	if err != nil {
		t.Fatal(err)
	}
	wb.CacheEffects = true // a repeated run must not consult it
	w := loadWorkload(t, filepath.Join(s.root, "live-triage.bench.yaml"))
	o, err := Run(context.Background(), w, Options{
		Runner: wb, Store: wb, Out: s.out, Record: mode, Archive: s.archive, Concurrency: concurrency, Repeats: k,
		Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
	})
	if err != nil {
		return nil, o
	}
	files := map[string][]byte{}
	// summary.md and gate.json name the workload file where a rule is
	// written, which differs between copies; the rest is position-free.
	names := []string{repeats.File, rundir.VerificationFile}
	for rep := 1; rep <= k; rep++ {
		names = append(names, workload.RepeatFile(rundir.ReportFile, rep))
	}
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(o.RunDir, name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = b
	}
	return files, o
}

func TestRepeatsAgainstLiveServer(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(flakyModel())
	defer fake.Close()
	s := writeLiveWorkloads(t, fake.BaseURL())
	env := map[string]string{"OPENAI_API_KEY": liveKey}

	recorded, o := runRepeatedLive(t, s, 3, 8, archive.All, env)
	if o.Err != nil || !o.Verification.OK {
		t.Fatalf("recording 3 repeats: %v %+v", o.Err, o.Verification)
	}
	// Every request reached the server once per repeat: repeats are not
	// collapsed by the memo, the recorder or the archive.
	perBody := map[string]int{}
	for _, r := range fake.Requests() {
		perBody[string(r.Raw)]++
	}
	if len(perBody) == 0 {
		t.Fatal("nothing reached the server")
	}
	for body, n := range perBody {
		if n != 3 {
			t.Fatalf("a request reached the server %d times over 3 repeats: %.200s", n, body)
		}
	}
	oneRun := len(perBody)

	// The flaky answer is a flaky case, measured.
	single := o.Repeats.Contender("single")
	c := single.Case("wrong-totals")
	if c.Verdict() != repeats.VerdictFlaky || len(c.PassedIn) != 2 || c.PassedIn[0] != 1 || c.PassedIn[1] != 3 {
		t.Fatalf("wrong-totals over 3 repeats: %+v", c)
	}
	// 4 cases, passes 3, 3, 3, 2: pass^3 = 3/4, pass rate 11/12.
	if single.PassHatK(3).Fraction() != "3/4" || single.PassRate().Fraction() != "11/12" {
		t.Fatalf("single: pass^3 %s, rate %s", single.PassHatK(3).Fraction(), single.PassRate().Fraction())
	}

	// The archive holds one recording per repeat of every case; repeats
	// whose receipts are identical share one payload file.
	arc, err := archive.Open(s.archive)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := arc.Entries()
	if err != nil {
		t.Fatal(err)
	}
	perCase := map[string][]int{}
	payloads := map[string]bool{}
	for _, e := range entries {
		if e.Workload != "live-triage" {
			continue
		}
		perCase[e.Contender+"/"+e.Case] = append(perCase[e.Contender+"/"+e.Case], max(1, e.Repeat))
		payloads[e.Receipt] = true
	}
	if len(perCase) != 8 {
		t.Fatalf("recorded cases %v", perCase)
	}
	for k, reps := range perCase {
		if len(reps) != 3 || reps[0] != 1 || reps[1] != 2 || reps[2] != 3 {
			t.Fatalf("%s recorded in repeats %v", k, reps)
		}
	}
	runs, _ := os.ReadDir(filepath.Join(s.archive, "runs"))
	if len(runs) != len(payloads) || len(payloads) >= 24 {
		t.Fatalf("%d payload files for %d distinct receipts of 24 recordings", len(runs), len(payloads))
	}
	index, _ := os.ReadFile(filepath.Join(s.archive, archive.IndexFile))
	if !bytes.Contains(index, []byte(`"repeat":2`)) || bytes.Count(index, []byte(`"repeat":`)) != 16 {
		t.Fatalf("index lines for repeats 2 and 3 should say so, repeat 1 should not:\n%s", index)
	}
	requireNoKey(t, s.store, s.out, s.archive)

	// A clean copy, no key: each repeat replays its own recording, nothing
	// reaches the server, and everything is byte-identical, at concurrency
	// 1 and 32. (The server stays up so that a request that did leave
	// would be counted; its URL is part of the backend's configuration.)
	fake.Reset()
	for _, n := range []int{1, 32} {
		clean := liveSetup{root: t.TempDir()}
		copyTree(t, s.root, clean.root, ".algal", "runs")
		clean.store, clean.out, clean.archive = filepath.Join(clean.root, ".algal"), filepath.Join(clean.root, "runs"), filepath.Join(clean.root, "receipts")
		replayed, o := runRepeatedLive(t, clean, 3, n, archive.None, nil)
		if o.Err != nil || !o.Verification.OK {
			t.Fatalf("replay at concurrency %d: %v", n, o.Err)
		}
		for name, b := range recorded {
			if !bytes.Equal(b, replayed[name]) {
				t.Errorf("concurrency %d: replayed %s differs from the recorded one", n, name)
			}
		}
	}
	if fake.Count() != 0 {
		t.Fatalf("replay sent %d requests", fake.Count())
	}
	// Repeat 2's report differs from repeat 1's: it replayed its own
	// recording, not repeat 1's.
	if bytes.Equal(recorded[rundir.ReportFile], recorded["report-r02.json"]) {
		t.Fatal("repeat 2 replayed repeat 1's answers")
	}

	// One more repeat than recorded: could-not-replay names repeat 4, and
	// --record missing asks the server for repeat 4 only.
	_, o = runRepeatedLive(t, s, 4, 8, archive.None, nil)
	var re *ReplayError
	if !errors.As(o.Err, &re) || !strings.Contains(re.Error(), "repeat 4") || strings.Contains(re.Error(), "repeat 3") {
		t.Fatalf("a fourth repeat under --record none: %v", o.Err)
	}
	// The escalation is only asked once the screen answers, so it is not
	// among the misses; every miss is repeat 4's.
	for _, m := range re.Misses {
		if m.Repeat != 4 {
			t.Fatalf("miss %+v is not repeat 4's", m)
		}
	}
	if len(re.Misses) == 0 || len(re.Misses) > oneRun || !strings.HasSuffix(re.Command, "--record missing --repeats 4") {
		t.Fatalf("%d misses (one repeat asks %d), command %q", len(re.Misses), oneRun, re.Command)
	}
	_, o = runRepeatedLive(t, s, 4, 8, archive.Missing, env)
	if o.Err != nil {
		t.Fatalf("--record missing: %v", o.Err)
	}
	if fake.Count() != oneRun {
		t.Fatalf("--record missing sent %d requests, want %d (repeat 4 only)", fake.Count(), oneRun)
	}
	k, stored, err := StoredRepeats(o.RunDir)
	if err != nil || k != 4 {
		t.Fatalf("repeats.json: %d %v", k, err)
	}
	if got, _ := canon.Encode(stored); !bytes.Contains(got, []byte(`"repeats":4`)) {
		t.Fatalf("repeats.json: %s", got)
	}
}
