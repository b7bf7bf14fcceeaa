package runrecord

import "github.com/algal-assay/assay/internal/atomicfile"

func isTempName(name string) bool { return atomicfile.IsTemp(name) }

// writeAtomic replaces path so that a reader (or a crash) sees either the
// old record or the new one, never a mix.
func writeAtomic(path string, data []byte) error { return atomicfile.Write(path, data) }
