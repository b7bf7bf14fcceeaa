package bundle

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/fault/faulttest"
)

func TestHTTPSource(t *testing.T) {
	t.Parallel()
	b, root, leaf, _ := packed(t)
	data, _ := canon.Encode(b)
	rh, _ := canon.DigestHex(root.Digest)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/b/" + rh + ".bundle.json":
			_, _ = w.Write(data)
		case "/broken/" + rh + ".bundle.json":
			w.WriteHeader(http.StatusInternalServerError)
		case "/bom/" + rh + ".bundle.json":
			_, _ = w.Write(append([]byte("\ufeff"), data...))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	src, err := NewSource(srv.URL+"/b/", 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Fetch(ctx, src, root.Digest)
	if err != nil || got.Root != root.Digest || len(got.Manifests) != 3 {
		t.Fatalf("fetch: %v", err)
	}
	_, err = Fetch(ctx, src, leaf.Digest)
	faulttest.Want(t, err, fault.StoreMiss)
	_, err = Fetch(ctx, &HTTP{Base: srv.URL + "/broken"}, root.Digest)
	faulttest.Want(t, err, fault.IOFailed)
	_, err = Fetch(ctx, &HTTP{Base: srv.URL + "/bom"}, root.Digest)
	faulttest.Want(t, err, fault.Parse)
}

// streamer writes chunks without a Content-Length (chunked encoding) until
// the client goes away or total bytes were written.
func streamer(total int64, written *atomic.Int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat(" ", 1<<16))
		fl := w.(http.Flusher)
		for written.Load() < total {
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
			fl.Flush()
		}
	}
}

func TestHTTPStreamPastCapWithoutContentLength(t *testing.T) {
	t.Parallel()
	var written atomic.Int64
	// The server would stream 4x the cap; the client must stop just past it.
	srv := httptest.NewServer(streamer(4*MaxBytes, &written))
	defer srv.Close()
	_, root, _, _ := packed(t)
	_, err := Fetch(context.Background(), &HTTP{Base: srv.URL}, root.Digest)
	faulttest.Want(t, err, fault.BudgetExhausted)
	if !strings.Contains(err.Error(), strconv.Itoa(MaxBytes)) {
		t.Fatalf("message should name the bound: %v", err)
	}
	// Closing the body stops the transfer: the server never gets near the
	// full stream (allow generous socket buffering).
	srv.CloseClientConnections()
	time.Sleep(10 * time.Millisecond)
	if w := written.Load(); w >= 2*MaxBytes {
		t.Fatalf("server streamed %d bytes: the body was not cancelled", w)
	}
}

func TestHTTPDeclaredLengthOverCap(t *testing.T) {
	t.Parallel()
	var bodyRead atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(101))
		_, _ = w.Write([]byte(strings.Repeat(" ", 101)))
		bodyRead.Store(true)
	}))
	defer srv.Close()
	_, root, _, _ := packed(t)
	_, err := Fetch(context.Background(), &HTTP{Base: srv.URL, Limit: 100}, root.Digest)
	faulttest.Want(t, err, fault.BudgetExhausted)
	if !strings.Contains(err.Error(), "declares 101") {
		t.Fatalf("a declared length over the bound is refused up front: %v", err)
	}
}

func TestHTTPWholeRequestDeadline(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Headers arrive at once; the body then stalls: the deadline must
		// bound the body read too, not only the headers.
		_, _ = w.Write([]byte(`{"contract":`))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	_, root, _, _ := packed(t)
	src, err := NewSource(srv.URL, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	// Without the deadline this call would wait for the stalled body
	// forever (release only fires when the test returns).
	_, err = Fetch(context.Background(), src, root.Digest)
	faulttest.Want(t, err, fault.BudgetExhausted)
	if !strings.Contains(err.Error(), "50 ms") {
		t.Fatalf("message: %v", err)
	}
}
