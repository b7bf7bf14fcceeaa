package runrecord

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as a harness process: with RUNRECORD_HELPER set
// it drives a Recorder in RUNRECORD_DIR, prints "ready" once the record is
// in the state the parent wants to interrupt, and waits to be signalled.
const (
	helperEnv = "RUNRECORD_HELPER"
	helperDir = "RUNRECORD_DIR"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode, os.Getenv(helperDir)))
	}
	os.Exit(m.Run())
}

func runHelper(mode, dir string) int {
	rec, err := Create(dir, paperAssembly(), Meta{RunSlug: "helper"}, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	check := func(err error) {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
	}
	switch mode {
	case "kill-mid-run":
		check(rec.StartPhase(1))
		check(rec.AddArtifact(1, "freeform-summary", "freeform-summary.md"))
		fmt.Println("ready")
		time.Sleep(time.Minute)
		return 4
	case "kill-mid-write":
		check(rec.StartPhase(6))
		fmt.Println("ready")
		for {
			it, err := rec.NextIteration(6)
			check(err)
			check(rec.AddLoopArtifact(6, it, "galaxy-workflow-draft", "galaxy-workflow-draft.gxwf.yml"))
		}
	case "sigint":
		check(rec.StartPhase(1))
		ctx, stop := CancelOnSignal(context.Background(), rec, func(err error) { fmt.Fprintln(os.Stderr, err) })
		defer stop()
		fmt.Println("ready")
		select {
		case <-ctx.Done():
			return 0
		case <-time.After(time.Minute):
			return 5
		}
	}
	return 6
}

// startHelper runs the helper in a fresh directory and waits for "ready".
func startHelper(t *testing.T, mode string) (*exec.Cmd, string) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, helperDir+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready" {
		t.Fatalf("helper did not get ready: %q %v", line, err)
	}
	return cmd, dir
}

// TestKilledMidRun: SIGKILL cannot be handled, so the record keeps saying
// running, parses, and shows the phase that was under way.
func TestKilledMidRun(t *testing.T) {
	cmd, dir := startHelper(t, "kill-mid-run")
	must(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	got := readBack(t, dir)
	if got.Status != RunRunning || got.FinishedAt != nil || got.Phases[0].Status != PhaseRunning || len(got.Phases[0].Artifacts) != 1 {
		t.Fatalf("after SIGKILL: %+v", got)
	}
	noTemps(t, dir)
}

// TestKilledMidWrite kills a helper that rewrites the record as fast as it
// can: whenever the kill lands, the record on disk is a whole earlier
// version. A stray temporary file is possible (killed between create and
// rename); readers skip it.
func TestKilledMidWrite(t *testing.T) {
	for i := 0; i < 3; i++ {
		cmd, dir := startHelper(t, "kill-mid-write")
		time.Sleep(time.Duration(40+80*i) * time.Millisecond)
		must(t, cmd.Process.Signal(syscall.SIGKILL))
		_ = cmd.Wait()
		got := readBack(t, dir)
		loop := got.Phases[1]
		if got.Status != RunRunning || loop.Status != PhaseRunning || loop.Iterations < len(loop.Artifacts) || len(loop.Artifacts) < loop.Iterations-1 {
			t.Fatalf("after SIGKILL mid-write: status %s loop %+v", got.Status, loop)
		}
		t.Logf("killed after %d iterations", loop.Iterations)
	}
}

// TestSIGINTCancels sends SIGINT to a helper running CancelOnSignal with
// the default signals: the record ends cancelled and the helper exits 0
// through its context.
func TestSIGINTCancels(t *testing.T) {
	cmd, dir := startHelper(t, "sigint")
	must(t, cmd.Process.Signal(os.Interrupt))
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
	got := readBack(t, dir)
	if got.Status != RunCancelled || got.FinishedAt == nil || got.Phases[0].Status != PhaseRunning {
		t.Fatalf("after SIGINT: %+v", got)
	}
	noTemps(t, dir)
}

// TestCancelOnSignalInProcess exercises the handler path in this process
// with SIGUSR1, and checks that stop without a signal leaves the run alone.
func TestCancelOnSignalInProcess(t *testing.T) {
	rec, dir := paperRecorder(t)
	ctx, stop := CancelOnSignal(context.Background(), rec, nil, syscall.SIGUSR1)
	must(t, syscall.Kill(os.Getpid(), syscall.SIGUSR1))
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("signal did not cancel the context")
	}
	stop()
	if got := readBack(t, dir); got.Status != RunCancelled {
		t.Fatalf("status %s", got.Status)
	}

	rec2, dir2 := paperRecorder(t)
	_, stop2 := CancelOnSignal(context.Background(), rec2, nil, syscall.SIGUSR1)
	stop2()
	if got := readBack(t, dir2); got.Status != RunRunning {
		t.Fatalf("stop without a signal changed status to %s", got.Status)
	}
}
