package execset

import (
	"reflect"
	"testing"

	"github.com/algal-assay/assay/engine/effect"
	"github.com/algal-assay/assay/engine/store"
)

func TestHostTakesTransportDirectories(t *testing.T) {
	t.Parallel()
	host, err := Set{}.Host(store.NewMemStore(), HostOptions{TransportDirs: []string{"bundles=b", "more=m"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"bundles": "b", "more": "m"}; !reflect.DeepEqual(host.Transports, want) {
		t.Errorf("transports %v, want %v", host.Transports, want)
	}
	for _, bad := range []string{"bundles", "=b", "bundles=", "web=https://example.com"} {
		if _, err := (Set{}).Host(store.NewMemStore(), HostOptions{TransportDirs: []string{bad}}); err == nil {
			t.Errorf("--transport %q accepted", bad)
		}
	}
}

// The approvals executor serves every gate request, whatever its route,
// and nothing else.
func TestGateApprovalsServeGatesOnly(t *testing.T) {
	t.Parallel()
	g := gateApprovals{effect.NewApprovals("approvals.json")}
	if !g.Serves(effect.Request{"contract": effect.EffectContract, "kind": effect.KindGate, "route": "fixtures"}) {
		t.Error("a routed gate request is not served")
	}
	if g.Serves(effect.Request{"contract": effect.EffectContract, "kind": "llm"}) {
		t.Error("a model request is served by the approvals")
	}
}
