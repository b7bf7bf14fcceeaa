package catalog

import (
	"os"
	"strings"

	"github.com/algal-assay/assay/engine/fault"
	"github.com/algal-assay/assay/engine/receipt"
	"github.com/algal-assay/assay/engine/store"
)

// ReadReceipt reads the receipt arg names: a file or, for a sha256:
// digest that names no file, the receipt stored under it in the file
// store dir (verified on read), as `assay runs` lists them.
func ReadReceipt(arg, dir string) (map[string]any, error) {
	if _, err := os.Stat(arg); err == nil || !strings.HasPrefix(arg, "sha256:") {
		return receipt.ReadFile(arg)
	}
	st, err := store.OpenFileStore(dir)
	if err != nil {
		return nil, err
	}
	v, ok, err := st.Get(store.Runs, arg)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &fault.Error{Code: fault.StoreMiss, File: dir, Message: "no receipt " + arg + " in the store",
			Hint: " (`assay runs --dir " + dir + "` lists the stored receipts)"}
	}
	return receipt.Object(v, arg, "receipt")
}
