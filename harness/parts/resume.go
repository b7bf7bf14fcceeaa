package parts

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/algal-assay/assay/engine/bench"
	"github.com/algal-assay/assay/engine/canon"
	"github.com/algal-assay/assay/harness/workload"
)

// Resuming a bench run in parts. A run killed (SIGKILL, a crash, a power
// cut) leaves its staging directory .<slug>.partial-* beside the run
// directory, holding the reports of the parts it finished; a cancelled or
// failed run leaves them in its staging directory or in the run directory
// it installed. A later run of the same workload lands in the same slug
// (the slug digests the config and every input, so the same slug means
// the same case list, systems, part list and part configs) and takes
// those reports instead of running their parts again, unless
// the run says fresh (harness.Options.Fresh).
//
// Nothing a killed run left is trusted: its record, configs and tables are
// ignored, and a report is taken only if it is byte for byte what a run
// writes (canonical JSON of the report it parses to) and passes the check
// the verify phase makes of every part (Check, as for a part taken
// from a shard): it is the report of the part's config as this run
// compiled it, every receipt it names is in the store and replays to it,
// and its cases consumed exactly the responses they declared. A torn,
// edited or foreign report is run again. The run writes a taken report's
// bytes as they were checked, and its verify phase takes the check's
// result for those bytes instead of checking them twice (Verified
// says why that holds) and folds it with every other part, so a resumed
// run directory is the one an uninterrupted run writes, byte for byte,
// the record aside (which names each reused part's report
// "reused-part-report").
//
// Staging directories are claimed under the run directory's lock
// (rundir.Claim): a second run of the same slug started meanwhile neither
// removes nor claims them, and runs its parts itself. Once every part's
// report is in the new stage the claimed directories are removed; a run
// killed before that leaves both, and the next run claims both.

// ReusedReport is the record's artifact id of a part report taken
// from an earlier, unfinished run instead of run again.
const ReusedReport = "reused-part-report"

// Resume says what a resumed run in parts took from the runs before it.
type Resume struct {
	// From are the directories searched for finished part reports, in the
	// order searched.
	From []string
	// Reused are the parts (1-based) whose reports were taken; Ran the
	// parts run here.
	Reused, Ran []int
	// Rejected says, per report found but not taken, why (torn, edited,
	// not verifying): each of those parts ran again.
	Rejected []string
}

// Note is the line a host prints about the resume.
func (r *Resume) Note(parts int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "resumed an unfinished run: %d of %d parts reused (each verified against the store and its part config), %d run", len(r.Reused), parts, len(r.Ran))
	if n := len(r.Rejected); n > 0 {
		fmt.Fprintf(&b, "; %d leftover part report(s) did not verify and their parts ran again (%s)", n, r.Rejected[0])
		if n > 1 {
			b.WriteString(", ...")
		}
	}
	b.WriteString("; --fresh runs every part")
	return b.String()
}

// Leftovers are where a run's finished part reports may be found, and
// what was taken from them.
type Leftovers struct {
	dirs []string
	// Resume says what was taken and what was not.
	Resume Resume
	// Verified are the taken parts' pre-check results, by part number,
	// for the verify phase (DeriveOptions.Verified).
	Verified map[int]*Verified
}

// NewLeftovers searches dirs, in order (nil when there are none).
func NewLeftovers(dirs []string) *Leftovers {
	if len(dirs) == 0 {
		return nil
	}
	return &Leftovers{dirs: dirs, Resume: Resume{From: dirs}, Verified: map[int]*Verified{}}
}

// Leftover is a part report taken from an unfinished run: its value and
// the bytes checked, which the run writes as they are.
type Leftover struct {
	Value map[string]any
	Raw   []byte
}

// Take returns part p's report from the first directory holding one that
// checks, or nil. cfg is the part's config as this run admitted it.
func (s *Leftovers) Take(ctx context.Context, p workload.Part, cfg *bench.Config, check Check) (*Leftover, error) {
	for _, dir := range s.dirs {
		path := filepath.Join(dir, p.ReportFile())
		l, vp, why, err := CheckLeftover(ctx, p, path, cfg, check)
		if err != nil {
			return nil, err
		}
		if why == "" {
			s.Resume.Reused = append(s.Resume.Reused, p.N)
			s.Verified[p.N] = vp
			return l, nil
		}
		if why != "missing" {
			s.Resume.Rejected = append(s.Resume.Rejected, why)
		}
	}
	s.Resume.Ran = append(s.Resume.Ran, p.N)
	return nil, nil
}

// CheckLeftover reads the report at path and checks it; why is "" when it
// may be taken, "missing" when there is none, else the reason it may not.
// err is only a cancelled context.
func CheckLeftover(ctx context.Context, p workload.Part, path string, cfg *bench.Config, check Check) (*Leftover, *Verified, string, error) {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil, "missing", nil
	}
	b, err := canon.ReadBounded(path, 0)
	if err != nil {
		return nil, nil, named(path, err), nil
	}
	v, err := canon.Parse(b, 0)
	if err != nil {
		return nil, nil, named(path, canon.InFile(path, b, err)), nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, nil, path + ": not a JSON object", nil
	}
	rep, err := bench.ParseReport(v)
	if err != nil {
		return nil, nil, named(path, err), nil
	}
	// Exactly the bytes a run writes for the report it parses to: no
	// field a verification would pass over.
	want, err := canon.Encode(rep.Value())
	if err != nil || !bytes.Equal(append(want, '\n'), b) {
		return nil, nil, path + ": not the canonical report its fields make", nil
	}
	pc, err := check(ctx, p, rep, v, cfg)
	if ctx.Err() != nil {
		return nil, nil, "", ctx.Err()
	}
	if err != nil {
		return nil, nil, named(path, err), nil
	}
	if len(pc.Mismatches) > 0 {
		// A mismatch starts with the report's basename.
		return nil, nil, filepath.Dir(path) + string(filepath.Separator) + pc.Mismatches[0], nil
	}
	return &Leftover{Value: m, Raw: b}, &Verified{Sum: sha256.Sum256(b), Checked: pc.Receipts, Unknown: pc.Unknown}, "", nil
}

// named is err's message, led by path unless it names it already.
func named(path string, err error) string {
	msg := err.Error()
	if strings.Contains(msg, path) {
		return msg
	}
	if base := filepath.Base(path); strings.HasPrefix(msg, base+":") || strings.HasPrefix(msg, base+" ") {
		return filepath.Dir(path) + string(filepath.Separator) + msg
	}
	return path + ": " + msg
}
