package atomicfile

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestWriteReplacesWhole(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "report.json")
	a := []byte(`{"a":"` + string(make([]byte, 0)) + `old"}`)
	b := make([]byte, 1<<20)
	for i := range b {
		b[i] = 'x'
	}
	if err := Write(p, a); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() { // a reader must only ever see one whole version
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			got, err := os.ReadFile(p)
			if err != nil {
				t.Error(err)
				return
			}
			if len(got) != len(a) && len(got) != len(b) {
				t.Errorf("torn read of %d bytes", len(got))
				return
			}
		}
	}()
	for i := 0; i < 20; i++ {
		data := a
		if i%2 == 0 {
			data = b
		}
		if err := Write(p, data); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if IsTemp(e.Name()) {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
	if err := Write(filepath.Join(dir, "missing", "x"), a); err == nil {
		t.Error("write into a missing directory succeeded")
	}
}
