package execset

import (
	"fmt"
	"strings"

	"github.com/algal-assay/assay/engine/bundle"
	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/mailbox"
	"github.com/algal-assay/assay/engine/store"
	"github.com/algal-assay/assay/engine/vm"
)

// HostOptions are what a manifest run's host has besides the set: the
// gate approvals, the mailboxes, the transport directories and who builds
// live executors.
type HostOptions struct {
	// Approvals is a gate approvals file {"<gate cell id>":"<label>"}
	// ("" for none).
	Approvals string
	// Mailboxes is the store directory whose mailboxes the mailbox host
	// tools use; "" denies them (a run that does not persist).
	Mailboxes string
	// TransportDirs are NAME=DIR local bundle directories (--transport).
	TransportDirs []string
	// Live builds the live named executors (nil: none is live).
	Live Live
}

// Host builds the host of one manifest run over st (run, resume, call):
// the approvals executor ahead of the set's executors, the mailbox host
// tools, the tool registry and the transports.
func (s Set) Host(st store.Store, opts HostOptions) (*vm.Host, error) {
	var execs []effect.Executor
	if opts.Approvals != "" {
		execs = append(execs, gateApprovals{effect.NewApprovals(opts.Approvals)})
	}
	flagExecs, err := s.Build(st, opts.Live)
	if err != nil {
		return nil, err
	}
	execs = append(execs, flagExecs...)
	var svc *mailbox.Service
	if opts.Mailboxes != "" {
		svc = mailbox.Open(opts.Mailboxes)
	}
	router := effect.NewRouter(append(execs, mailbox.NewTools(svc))...)
	if s.Tools != "" {
		if router.Tools, err = effect.LoadTools(s.Tools); err != nil {
			return nil, err
		}
	}
	host := &vm.Host{Store: st, Router: router}
	if s.Transports != "" {
		if host.Sources, err = bundle.LoadTransports(s.Transports); err != nil {
			return nil, err
		}
	}
	return host, addTransportDirs(host, opts.TransportDirs)
}

// gateApprovals admits the approvals executor for gate requests ahead of
// every routed executor (scripted fixtures included): as a request-aware
// executor it serves every gate request, whatever its route, and a gate
// absent from the file suspends rather than falling through to a fixture.
type gateApprovals struct{ *effect.Approvals }

func (g gateApprovals) Serves(req effect.Request) bool {
	k, _ := req["kind"].(string)
	return req["contract"] == effect.EffectContract && k == effect.KindGate
}

// addTransportDirs gives host the NAME=DIR bundle directories; a malformed
// pair is an argument problem (a plain error).
func addTransportDirs(host *vm.Host, transports []string) error {
	for _, t := range transports {
		name, dir, ok := strings.Cut(t, "=")
		if !ok || name == "" || dir == "" || strings.Contains(dir, "://") {
			return fmt.Errorf("--transport wants NAME=DIR (a local bundle directory), got %q", t)
		}
		if host.Transports == nil {
			host.Transports = map[string]string{}
		}
		host.Transports[name] = dir
	}
	return nil
}

// Workbench opens a workbench over the file store dir (a memory store
// when ""), admits the *.algal.json modules of the directory modules
// ("" for none) and gives it the set (ApplyTo): the workbench of a bench
// or foundry config run and of a report's verification.
func (s Set) Workbench(dir, modules string) (*vm.Workbench, error) {
	wb, err := vm.NewWorkbench(dir)
	if err != nil {
		return nil, err
	}
	if modules != "" {
		if err := vm.AdmitModules(wb.Store, modules); err != nil {
			return nil, err
		}
	}
	if err := s.ApplyTo(wb); err != nil {
		return nil, err
	}
	return wb, nil
}
