package canon

import (
	"fmt"
	"os"
	"runtime/debug"
	"syscall"

	"github.com/algal-assay/assay/engine/fault"
)

// canMap says ReadFile may parse large files through a mapping here.
const canMap = true

// mapFrom is the file size from which ReadFile maps: below it a copy on
// the heap costs less than setting up the mapping.
const mapFrom = bigDocument

// readMapped parses the regular file f of size bytes (already checked
// against the bound)
// through a read-only private mapping, handing the pages already parsed
// back to the kernel as it goes (MADV_DONTNEED: they stay in the page
// cache, not in this process), so the text and its value are never both
// resident and a large document's peak is about its value alone. The value
// never points into the mapping (the parser copies every string), so the
// mapping is gone on return. A file truncated under the mapping faults;
// the fault becomes IO_FAILED instead of a crash.
func readMapped(path string, f *os.File, size, _ int) (v any, err error) {
	data, merr := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_PRIVATE)
	if merr != nil {
		return nil, &fault.Error{Code: fault.IOFailed, Offset: -1, File: path, Message: fmt.Sprintf("map: %v", merr)}
	}
	defer func() { _ = syscall.Munmap(data) }()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			v, err = nil, fileShrank(path)
		}
	}()
	page := os.Getpagesize()
	released := 0
	v, _, err = parse(data, func(upto int) {
		upto -= upto % page
		if upto > released {
			_ = syscall.Madvise(data[released:upto], syscall.MADV_DONTNEED)
			released = upto
		}
	}, false)
	if err != nil {
		return nil, InFile(path, data, err)
	}
	return v, nil
}

func fileShrank(path string) error {
	return &fault.Error{Code: fault.IOFailed, Offset: -1, File: path, Message: "file shrank while read"}
}
