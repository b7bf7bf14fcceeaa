package manifest

import (
	"fmt"
	"maps"
	"slices"

	"github.com/algal-assay/assay/engine/canon"
)

// agentParts read the optional parts of an agent-style cell after its
// prompt, output and view, in the order their first fault is reported.
var agentParts = []func(kind Kind, a *AgentCell, raw map[string]any) error{
	readAgentTools, readAgentCompact, readAgentShadow, readAgentRetry,
}

func fillAgent(c *Cell, raw, norm map[string]any) error {
	if err := normalizeInputs(c, raw, norm, false); err != nil {
		return err
	}
	a := &AgentCell{}
	var err error
	if a.Prompt, err = asText(raw["prompt"], "prompt", MaxPromptLen); err != nil {
		return err
	}
	if a.Output, err = parseOutput(raw["output"], "output"); err != nil {
		return err
	}
	if c.Kind != KindAgent && a.Output.Kind != "choice" {
		return invalid("output.kind", "%s cells require a choice output", c.Kind)
	}
	if a.View, a.Route, err = parseViewRoute(raw, norm); err != nil {
		return err
	}
	for _, part := range agentParts {
		if err := part(c.Kind, a, raw); err != nil {
			return err
		}
	}
	c.Agent = a
	return nil
}

func readAgentTools(kind Kind, a *AgentCell, raw map[string]any) error {
	t, ok := raw["tools"]
	if !ok {
		return nil
	}
	if kind == KindGate {
		return invalid("tools", "gate cells cannot use tools")
	}
	var err error
	a.Tools, err = toolList.parse(t, "tools")
	return err
}

// readAgentCompact reads an agent's tool-log compaction policy.
func readAgentCompact(kind Kind, a *AgentCell, raw map[string]any) error {
	cv, ok := raw["compact"]
	if !ok {
		return nil
	}
	if kind != KindAgent {
		return invalid("compact", "compact is agent-only")
	}
	cp, err := parseCompact(cv)
	if err != nil {
		return err
	}
	if a.Tools == nil {
		return invalid("compact", "compact needs tools: no tool log ever accumulates")
	}
	a.Compact = cp
	return nil
}

func parseCompact(v any) (*Compact, error) {
	cm, err := asObject(v, "compact")
	if err != nil {
		return nil, err
	}
	if err := onlyKeys(cm, "compact", "maxLogBytes", "keepRecent", "route", "mode"); err != nil {
		return nil, err
	}
	cp := &Compact{}
	if cp.Mode, err = compactMode(cm); err != nil {
		return nil, err
	}
	if cp.MaxLogBytes, err = asInt(cm["maxLogBytes"], "compact.maxLogBytes", 1, MaxValueBytes); err != nil {
		return nil, err
	}
	if kr, ok := cm["keepRecent"]; ok {
		if cp.KeepRecent, err = asInt(kr, "compact.keepRecent", 0, 8); err != nil {
			return nil, err
		}
		cp.HasKeepRecent = true
	}
	if r, ok := cm["route"]; ok {
		if cp.Route, err = parseRoute(r, "compact.route"); err != nil {
			return nil, err
		}
	}
	return cp, nil
}

// compactMode reads the compaction mode: "" (summarize by a route) or
// "elide", which takes no route.
func compactMode(cm map[string]any) (string, error) {
	mode, ok := cm["mode"]
	if !ok {
		return "", nil
	}
	if mode != "elide" {
		return "", invalid("compact.mode", "must be \"elide\"")
	}
	if _, ok := cm["route"]; ok {
		return "", invalid("compact.route", "not used by elide mode")
	}
	return "elide", nil
}

// readAgentShadow reads the label a classifier commits instead of the
// model's output.
func readAgentShadow(kind Kind, a *AgentCell, raw map[string]any) error {
	sv, ok := raw["shadow"]
	if !ok {
		return nil
	}
	sm, err := asObject(sv, "shadow")
	if err != nil {
		return err
	}
	if err := onlyKeys(sm, "shadow", "take"); err != nil {
		return err
	}
	if kind != KindClassifier {
		return invalid("shadow", "shadow is classifier-only")
	}
	take, isText := sm["take"].(string)
	if !isText || !contains(a.Output.Labels, take) {
		return invalid("shadow.take", "must be a declared label")
	}
	a.Shadow, a.HasShadow = take, true
	return nil
}

func readAgentRetry(_ Kind, a *AgentCell, raw map[string]any) error {
	var err error
	a.Retry, err = optionalRetry(raw)
	return err
}

func fillDecide(c *Cell, raw, norm map[string]any) error {
	if err := normalizeInputs(c, raw, norm, false); err != nil {
		return err
	}
	d := &DecideCell{}
	var err error
	if p, ok := raw["prompt"]; ok {
		if d.Prompt, err = asText(p, "prompt", MaxPromptLen); err != nil {
			return err
		}
		d.HasPrompt = true
	}
	if d.Questions, d.QuestionsValue, err = parseQuestions(raw["questions"], "questions"); err != nil {
		return err
	}
	if d.View, d.Route, err = parseViewRoute(raw, norm); err != nil {
		return err
	}
	if d.Retry, err = optionalRetry(raw); err != nil {
		return err
	}
	c.Decide = d
	return nil
}

// parseQuestions admits a decide question map.
func parseQuestions(v any, loc string) ([]Question, map[string]any, error) {
	m, err := asObject(v, loc)
	if err != nil {
		return nil, nil, err
	}
	if len(m) == 0 || len(m) > MaxQuestions {
		return nil, nil, invalid(loc, "requires 1..%d questions, got %d", MaxQuestions, len(m))
	}
	qs := make([]Question, 0, len(m))
	for _, name := range canon.SortedKeys(m) {
		q, err := parseQuestion(name, m[name], fmt.Sprintf("%s[%q]", loc, name))
		if err != nil {
			return nil, nil, err
		}
		qs = append(qs, q)
	}
	return qs, m, nil
}

// criteriaRules check a question's criteria by question type; present
// says whether the question declares any.
var criteriaRules = map[string]func(crit any, present bool, loc string) error{
	"noul":   checkNoulCriteria,
	"choice": checkChoiceCriteria,
	"score":  checkScoreCriteria,
}

func parseQuestion(name string, v any, loc string) (Question, error) {
	q := Question{Name: name}
	if canon.UTF16Len(name) > MaxQuestionName {
		return q, invalid(loc, "question name exceeds %d units", MaxQuestionName)
	}
	qm, err := asObject(v, loc)
	if err != nil {
		return q, err
	}
	if err := onlyKeys(qm, loc, "type", "instructions", "criteria"); err != nil {
		return q, err
	}
	if q.Type, err = asText(qm["type"], loc+".type", 16); err != nil {
		return q, err
	}
	if q.Instructions, err = asText(qm["instructions"], loc+".instructions", MaxInstructions); err != nil {
		return q, err
	}
	if q.Instructions == "" {
		return q, invalid(loc+".instructions", "must not be empty")
	}
	check, ok := criteriaRules[q.Type]
	if !ok {
		return q, invalid(loc+".type", "must be noul, choice, or score")
	}
	crit, hasCrit := qm["criteria"]
	if err := check(crit, hasCrit, loc+".criteria"); err != nil {
		return q, err
	}
	if hasCrit {
		q.Criteria = crit
	}
	return q, nil
}

// checkNoulCriteria admits optional texts for the true and false answers.
func checkNoulCriteria(crit any, present bool, loc string) error {
	if !present {
		return nil
	}
	cm, err := asObject(crit, loc)
	if err != nil {
		return err
	}
	if err := onlyKeys(cm, loc, "true", "false"); err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(cm)) {
		if _, err := asText(cm[k], loc+"."+k, MaxCriterionLen); err != nil {
			return err
		}
	}
	return nil
}

// checkChoiceCriteria admits a map of choices, each with a text or null.
func checkChoiceCriteria(crit any, _ bool, loc string) error {
	cm, err := asObject(crit, loc)
	if err != nil {
		return err
	}
	if len(cm) == 0 || len(cm) > MaxCriteria {
		return invalid(loc, "requires 1..%d entries", MaxCriteria)
	}
	for _, k := range slices.Sorted(maps.Keys(cm)) {
		if canon.UTF16Len(k) > MaxQuestionName {
			return invalid(loc, "criterion key exceeds %d units", MaxQuestionName)
		}
		if cm[k] == nil {
			continue
		}
		if _, err := asText(cm[k], fmt.Sprintf("%s[%q]", loc, k), MaxCriterionLen); err != nil {
			return err
		}
	}
	return nil
}

// checkScoreCriteria admits the texts of a score scale.
func checkScoreCriteria(crit any, _ bool, loc string) error {
	l, isList := crit.([]any)
	if !isList {
		return invalid(loc, "must be a list of 1..%d criteria", MaxCriteria)
	}
	// Both runtimes reject an over-long score scale as a malformed
	// declaration (PARSE_FAILED), not as a count budget.
	if len(l) == 0 || len(l) > MaxCriteria {
		return invalid(loc, "requires 1..%d entries", MaxCriteria)
	}
	for i, x := range l {
		if _, err := asText(x, fmt.Sprintf("%s[%d]", loc, i), MaxCriterionLen); err != nil {
			return err
		}
	}
	return nil
}
