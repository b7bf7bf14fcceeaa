package manifest

import "github.com/algal-assay/assay/engine/canon"

// embedKindParts read the fields one embedding kind adds to manifest and
// via (organism adds none).
var embedKindParts = map[Kind]func(e *EmbedCell, raw map[string]any) error{
	KindRepeat: readRepeat,
	KindEach:   readEach,
}

func fillEmbed(c *Cell, raw, _ map[string]any) error {
	e := &EmbedCell{}
	d, err := asText(raw["manifest"], "manifest", 71)
	if err != nil {
		return err
	}
	if !canon.IsDigest(d) {
		return invalid("manifest", "%q is not a sha256: digest", d)
	}
	e.Manifest = d
	if v, ok := raw["via"]; ok {
		if e.Via, err = asID(v, "via"); err != nil {
			return err
		}
	}
	if read, ok := embedKindParts[c.Kind]; ok {
		if err := read(e, raw); err != nil {
			return err
		}
	}
	c.Embed = e
	return nil
}

func readRepeat(e *EmbedCell, raw map[string]any) error {
	var err error
	if e.MaxRounds, err = asInt(raw["maxRounds"], "maxRounds", 1, MaxRounds); err != nil {
		return err
	}
	if cv, ok := raw["carry"]; ok {
		if e.Carry, err = parseCarry(cv); err != nil {
			return err
		}
	}
	if uv, ok := raw["until"]; ok {
		if e.Until, err = parseUntil(uv); err != nil {
			return err
		}
	}
	return nil
}

// parseCarry reads a repeat's carry map (interface output -> input), in
// canonical key order.
func parseCarry(v any) ([]Carry, error) {
	cm, err := asObject(v, "carry")
	if err != nil {
		return nil, err
	}
	if len(cm) > MaxCarry {
		return nil, limit("carry", "%d entries exceed the bound of %d", len(cm), MaxCarry)
	}
	carry := []Carry{}
	for _, out := range canon.SortedKeys(cm) {
		if err := nameID(out, "carry"); err != nil {
			return nil, err
		}
		in, err := asID(cm[out], "carry."+out)
		if err != nil {
			return nil, err
		}
		carry = append(carry, Carry{Output: out, Input: in})
	}
	return carry, nil
}

func parseUntil(v any) (*Until, error) {
	um, err := asObject(v, "until")
	if err != nil {
		return nil, err
	}
	if err := onlyKeys(um, "until", "output", "equals", "field"); err != nil {
		return nil, err
	}
	u := &Until{}
	if u.Output, err = asID(um["output"], "until.output"); err != nil {
		return nil, err
	}
	if u.Equals, err = asText(um["equals"], "until.equals", 64); err != nil {
		return nil, err
	}
	if f, ok := um["field"]; ok {
		if u.Field, err = asID(f, "until.field"); err != nil {
			return nil, err
		}
	}
	return u, nil
}

func readEach(e *EmbedCell, raw map[string]any) error {
	var err error
	if e.MaxItems, err = asInt(raw["maxItems"], "maxItems", 1, MaxEachItems); err != nil {
		return err
	}
	e.Over, err = asID(raw["over"], "over")
	return err
}
