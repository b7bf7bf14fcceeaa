package bench

// InspectValue renders a bench report read as a JSON value (`assay bench
// inspect`), as foundry.InspectValue does a foundry report.
func InspectValue(v any) (string, error) {
	r, err := ParseReport(v)
	if err != nil {
		return "", err
	}
	return Inspect(r), nil
}
