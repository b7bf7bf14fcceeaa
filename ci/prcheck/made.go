package prcheck

import "errors"

// MadeRunsOf names the runs made beforehand (`assay ci pr --base-runs
// --base-store --head-runs --head-store`, e.g. what ci merge assembled
// from sharded runs): all four, or none (nil: the check makes its runs).
// Some but not all is an argument problem (a plain error).
func MadeRunsOf(baseRuns, baseStore, headRuns, headStore string) (*MadeRuns, error) {
	given := 0
	for _, v := range []string{baseRuns, baseStore, headRuns, headStore} {
		if v != "" {
			given++
		}
	}
	switch given {
	case 0:
		return nil, nil
	case 4:
		return &MadeRuns{BaseRuns: baseRuns, BaseStore: baseStore, HeadRuns: headRuns, HeadStore: headStore}, nil
	}
	return nil, errors.New("give all of --base-runs, --base-store, --head-runs and --head-store, or none")
}
