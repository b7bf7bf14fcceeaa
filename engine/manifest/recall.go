package manifest

import "strings"

// recallParts read the optional parts of a recall cell after its query,
// in the order their first fault is reported.
var recallParts = []func(r *RecallCell, raw map[string]any) error{
	readRecallK, readEmbedder, readRecallRoute, readRerank, readRecallRetry,
}

func fillRecall(c *Cell, raw, norm map[string]any) error {
	if err := normalizeInputs(c, raw, norm, true); err != nil {
		return err
	}
	r := &RecallCell{}
	q, ok := raw["query"]
	if !ok {
		return invalid("query", "recall cells require a query program")
	}
	var err error
	if r.Query, err = parseProgram(q, "query", portNames(c.Declared)); err != nil {
		return err
	}
	for _, part := range recallParts {
		if err := part(r, raw); err != nil {
			return err
		}
	}
	c.Recall = r
	return nil
}

func readRecallK(r *RecallCell, raw map[string]any) error {
	k, ok := raw["k"]
	if !ok {
		return nil
	}
	var err error
	r.K, err = asInt(k, "k", 1, MaxRecallK)
	return err
}

// readEmbedder reads the embedder: local, gateway or gateway:<model>.
func readEmbedder(r *RecallCell, raw map[string]any) error {
	e, ok := raw["embedder"]
	if !ok {
		return nil
	}
	var err error
	if r.Embedder, err = asText(e, "embedder", 64); err != nil {
		return err
	}
	model, isGateway := strings.CutPrefix(r.Embedder, "gateway:")
	if !(r.Embedder == "local" || r.Embedder == "gateway" || isGateway && model != "") {
		return invalid("embedder", "must be local, gateway or gateway:<model>, got %q", r.Embedder)
	}
	return nil
}

func readRecallRoute(r *RecallCell, raw map[string]any) error {
	var err error
	r.Route, err = optionalRoute(raw, "route")
	return err
}

// readRerank reads the decision rerank policy: a route naming a provider
// or preset, and how many hits to keep (at most k).
func readRerank(r *RecallCell, raw map[string]any) error {
	rv, ok := raw["rerank"]
	if !ok {
		return nil
	}
	rm, err := asObject(rv, "rerank")
	if err != nil {
		return err
	}
	if err := onlyKeys(rm, "rerank", "route", "take"); err != nil {
		return err
	}
	if _, ok := rm["route"]; !ok {
		return invalid("rerank.route", "recall rerank requires a route")
	}
	route, err := parseRoute(rm["route"], "rerank.route")
	if err != nil {
		return err
	}
	_, hasProvider := route.Value["provider"]
	_, hasPreset := route.Value["preset"]
	if !hasProvider && !hasPreset {
		return invalid("rerank.route", "requires provider or preset")
	}
	rr := &Rerank{Route: *route}
	if t, ok := rm["take"]; ok {
		if rr.Take, err = asInt(t, "rerank.take", 1, r.EffectiveK()); err != nil {
			return err
		}
	}
	r.Rerank = rr
	return nil
}

func readRecallRetry(r *RecallCell, raw map[string]any) error {
	var err error
	r.Retry, err = optionalRetry(raw)
	return err
}
