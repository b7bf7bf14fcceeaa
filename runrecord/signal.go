package runrecord

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// CancelOnSignal turns a graceful user stop into a cancelled record. Until
// stop is called, the first of sigs (SIGINT and SIGTERM when none are given)
// makes the run cancelled via rec.Cancel and then cancels the returned
// context, so the harness can abort the running phase knowing the record
// already says cancelled. A second signal is left to the default handler
// once stop has run. onErr, if non-nil, receives a failed Cancel write.
//
// SIGKILL cannot be caught; a killed run keeps status running, which is how
// a hard interruption is told apart from success.
func CancelOnSignal(ctx context.Context, rec *Recorder, onErr func(error), sigs ...os.Signal) (context.Context, func()) {
	if len(sigs) == 0 {
		sigs = []os.Signal{os.Interrupt, syscall.SIGTERM}
	}
	ctx, cancel := context.WithCancel(ctx)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, sigs...)
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-ch:
			if err := rec.Cancel(); err != nil && onErr != nil {
				onErr(err)
			}
			cancel()
		case <-ctx.Done():
		}
	}()
	stop := func() {
		signal.Stop(ch)
		cancel()
		<-done
	}
	return ctx, stop
}
