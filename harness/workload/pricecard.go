package workload

import (
	"sort"

	"github.com/algal-assay/assay/internal/suggest"
	"gopkg.in/yaml.v3"
)

// checkPriceCard rejects a price card that cannot mean what it says: a
// price for a model nothing reports (a typo, or a model no executor uses:
// its cost would read "unknown" at best), and a usage entry naming a model
// the card has no price for (every cost it reaches would be unknown).
// Executors other than `cases` (live, replay:, cmd:, scripted:) report
// models of their own, so beside them a card is only checked one way.
func (w *Workload) checkPriceCard(d *decoder, prices, usage *yaml.Node) error {
	if prices == nil || prices.Kind != yaml.MappingNode {
		return nil
	}
	priced := map[string]*yaml.Node{}
	var names []string
	for i := 0; i+1 < len(prices.Content); i += 2 {
		priced[prices.Content[i].Value] = prices.Content[i]
		names = append(names, prices.Content[i].Value)
	}
	used := map[string]bool{}
	var models []string
	if usage != nil && usage.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(usage.Content); i += 2 {
			cells := usage.Content[i+1]
			if cells.Kind != yaml.MappingNode {
				continue
			}
			for j := 0; j+1 < len(cells.Content); j += 2 {
				entry := cells.Content[j+1]
				if entry.Kind != yaml.MappingNode {
					continue
				}
				for k := 0; k+1 < len(entry.Content); k += 2 {
					if entry.Content[k].Value != "model" || entry.Content[k+1].Kind != yaml.ScalarNode {
						continue
					}
					m := entry.Content[k+1]
					if _, ok := priced[m.Value]; !ok {
						path := join(join(join("usage", usage.Content[i].Value), cells.Content[j].Value), "model")
						return d.fail(m, path, "model %q has no price in prices:%s, so every cost it reaches would be unknown (the priced models are %s)", m.Value, suggest.DidYouMean(m.Value, names), quoteList(names))
					}
					if !used[m.Value] {
						used[m.Value] = true
						models = append(models, m.Value)
					}
				}
			}
		}
	}
	for _, s := range w.Systems {
		for _, e := range s.Executors {
			if !e.FromCases() {
				// A live server, a recording, a command or a scripted file
				// reports models of its own.
				return nil
			}
		}
	}
	sort.Strings(names)
	for _, name := range names {
		if used[name] {
			continue
		}
		return d.fail(priced[name], join("prices", name), "no usage entry reports model %q, so this price is never applied%s (usage: names %s)", name, suggest.DidYouMean(name, models), quoteList(models))
	}
	return nil
}
