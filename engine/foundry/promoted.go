package foundry

// Promoted reads the promoted organism's digest of a foundry report or,
// with search, of an algal.search.v1 report's result.
func Promoted(v any, search bool) (string, error) {
	if search {
		s, err := ParseSearchReport(v)
		if err != nil {
			return "", err
		}
		return s.Result.Promoted, nil
	}
	r, err := ParseReport(v)
	if err != nil {
		return "", err
	}
	return r.Promoted, nil
}
