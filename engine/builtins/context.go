package builtins

import "github.com/algal-assay/assay/engine/fault"

// context.compact.v1 projects an algal.context.v1 item list into an
// algal.context-view.v1 that fits policy.maxBytes. Walking from the oldest
// item, while the view is still over the target, an item that is neither
// pinned, nor a system or user turn, nor among the keepRecent newest is
// replaced by a stub {id, role, ref} whose ref is the digest of the whole
// item (only when the stub is strictly smaller). Nothing is summarised;
// the archive output is the untouched source, so every stub can be
// resolved back to its item. A view that cannot fit fails rather than
// dropping protected context.

const (
	contextContract     = "algal.context.v1"
	contextViewContract = "algal.context-view.v1"
	maxContextArchive   = 1_048_576
	maxContextItems     = 64
)

func fnContextCompact(in map[string]any) (map[string]any, int, error) {
	view, f := compactContext(in["source"], in["policy"])
	if f != nil {
		return nil, 0, f
	}
	return map[string]any{"view": view, "archive": in["source"]}, 0, nil
}

func compactContext(source, policy any) (map[string]any, *fault.Error) {
	if f := shapeKeys(source, "contract", "items"); f != nil {
		return nil, f
	}
	if f := shapeKeys(policy, "maxBytes", "keepRecent"); f != nil {
		return nil, f
	}
	src, pol := source.(map[string]any), policy.(map[string]any)
	if src["contract"] != contextContract {
		return nil, shapeInvalid("context contract")
	}
	n, f := canonLen(source)
	if f != nil {
		return nil, f
	}
	if n > maxContextArchive {
		return nil, shapeLimit("context archive bytes")
	}
	target, f := shapeInteger(pol["maxBytes"], 128, 262_144)
	if f != nil {
		return nil, f
	}
	recent, f := shapeInteger(pol["keepRecent"], 0, 64)
	if f != nil {
		return nil, f
	}
	items, f := shapeList(src["items"], maxContextItems)
	if f != nil {
		return nil, f
	}
	ids := map[string]bool{}
	for _, it := range items {
		if f := shapeKeys(it, "id", "role", "content", "pinned"); f != nil {
			return nil, f
		}
		item := it.(map[string]any)
		id, f := shapeID(item["id"])
		if f != nil {
			return nil, f
		}
		if ids[id] {
			return nil, shapeInvalid("duplicate context item id")
		}
		ids[id] = true
		switch item["role"] {
		case "system", "user", "assistant", "tool":
		default:
			return nil, shapeInvalid("context role")
		}
		if _, ok := item["content"]; !ok {
			return nil, shapeInvalid("context content required")
		}
		if p, ok := item["pinned"]; ok {
			if _, isBool := p.(bool); !isBool {
				return nil, shapeInvalid("pinned must be boolean")
			}
		}
	}
	view := make([]any, len(items))
	copy(view, items)
	before, f := canonLen(view)
	if f != nil {
		return nil, f
	}
	elided := []any{}
	for index := 0; index < len(items)-recent; index++ {
		size, f := canonLen(view)
		if f != nil {
			return nil, f
		}
		if size <= target {
			break
		}
		item := items[index].(map[string]any)
		if item["pinned"] == true || item["role"] == "system" || item["role"] == "user" {
			continue
		}
		ref, f := canonDigest(item)
		if f != nil {
			return nil, f
		}
		stub := map[string]any{"id": item["id"], "role": item["role"], "ref": ref}
		stubLen, f := canonLen(stub)
		if f != nil {
			return nil, f
		}
		itemLen, f := canonLen(item)
		if f != nil {
			return nil, f
		}
		if stubLen >= itemLen {
			continue
		}
		view[index] = stub
		elided = append(elided, map[string]any{"id": item["id"], "ref": ref})
	}
	after, f := canonLen(view)
	if f != nil {
		return nil, f
	}
	if after > target {
		return nil, shapeLimit("protected context cannot fit; request a larger budget or explicit new task boundary")
	}
	sd, f := canonDigest(source)
	if f != nil {
		return nil, f
	}
	return map[string]any{
		"contract":        contextViewContract,
		"source":          sd,
		"policy":          policy,
		"items":           view,
		"elided":          elided,
		"beforeBytes":     float64(before),
		"afterBytes":      float64(after),
		"semanticSummary": false,
	}, nil
}
