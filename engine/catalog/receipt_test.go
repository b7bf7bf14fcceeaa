package catalog

import (
	"strings"
	"testing"

	"github.com/algal-assay/assay/engine/fault"
)

// A digest that names no file and no stored receipt is a STORE_MISS that
// says where to look; a path that is not a digest is read as a file.
func TestReadReceiptByDigest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	digest := "sha256:" + strings.Repeat("0", 64)
	_, err := ReadReceipt(digest, dir)
	e, ok := fault.As(err)
	if !ok || e.Code != fault.StoreMiss || e.File != dir || !strings.Contains(e.Hint, "assay runs --dir "+dir) {
		t.Fatalf("missing digest: %v", err)
	}
	if _, err := ReadReceipt(dir+"/absent.json", dir); fault.CodeOf(err) == fault.StoreMiss {
		t.Errorf("a file path was looked up in the store: %v", err)
	}
}
