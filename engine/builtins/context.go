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

// contextRoles are the roles a context item may have.
var contextRoles = []string{"system", "user", "assistant", "tool"}

func compactContext(source, policy any) (map[string]any, *fault.Error) {
	items, target, recent, f := admitContext(source, policy)
	if f != nil {
		return nil, f
	}
	view := make([]any, len(items))
	copy(view, items)
	before, f := canonLen(view)
	if f != nil {
		return nil, f
	}
	elided, f := elideOldest(items, view, target, recent)
	if f != nil {
		return nil, f
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

// admitContext checks the source and the policy and returns the items,
// the target size in bytes and how many newest items to keep.
func admitContext(source, policy any) ([]any, int, int, *fault.Error) {
	if f := shapeKeys(source, "contract", "items"); f != nil {
		return nil, 0, 0, f
	}
	if f := shapeKeys(policy, "maxBytes", "keepRecent"); f != nil {
		return nil, 0, 0, f
	}
	src, pol := source.(map[string]any), policy.(map[string]any)
	if src["contract"] != contextContract {
		return nil, 0, 0, shapeInvalid("context contract")
	}
	n, f := canonLen(source)
	if f != nil {
		return nil, 0, 0, f
	}
	if n > maxContextArchive {
		return nil, 0, 0, shapeLimit("context archive bytes")
	}
	target, f := shapeInteger(pol["maxBytes"], 128, 262_144)
	if f != nil {
		return nil, 0, 0, f
	}
	recent, f := shapeInteger(pol["keepRecent"], 0, 64)
	if f != nil {
		return nil, 0, 0, f
	}
	items, f := contextItems(src["items"])
	return items, target, recent, f
}

// contextItems checks the item list: closed items, unique ids, known
// roles, content present, pinned a boolean.
func contextItems(v any) ([]any, *fault.Error) {
	items, f := shapeList(v, maxContextItems)
	if f != nil {
		return nil, f
	}
	ids := map[string]bool{}
	for _, it := range items {
		if f := checkContextItem(it, ids); f != nil {
			return nil, f
		}
	}
	return items, nil
}

func checkContextItem(it any, ids map[string]bool) *fault.Error {
	if f := shapeKeys(it, "id", "role", "content", "pinned"); f != nil {
		return f
	}
	item := it.(map[string]any)
	id, f := shapeID(item["id"])
	if f != nil {
		return f
	}
	if ids[id] {
		return shapeInvalid("duplicate context item id")
	}
	ids[id] = true
	if role, _ := item["role"].(string); !containsString(contextRoles, role) {
		return shapeInvalid("context role")
	}
	if _, ok := item["content"]; !ok {
		return shapeInvalid("context content required")
	}
	if p, ok := item["pinned"]; ok {
		if _, isBool := p.(bool); !isBool {
			return shapeInvalid("pinned must be boolean")
		}
	}
	return nil
}

// elideOldest walks from the oldest item while view is over target,
// replacing each unprotected item outside the recent ones by its stub when
// the stub is smaller; it returns the elided ids and refs.
func elideOldest(items, view []any, target, recent int) ([]any, *fault.Error) {
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
		stub, ref, f := smallerStub(item)
		if f != nil {
			return nil, f
		}
		if stub == nil {
			continue
		}
		view[index] = stub
		elided = append(elided, map[string]any{"id": item["id"], "ref": ref})
	}
	return elided, nil
}

// smallerStub returns the stub {id, role, ref} of item and its ref, or a
// nil stub when it would not be strictly smaller than the item.
func smallerStub(item map[string]any) (map[string]any, string, *fault.Error) {
	ref, f := canonDigest(item)
	if f != nil {
		return nil, "", f
	}
	stub := map[string]any{"id": item["id"], "role": item["role"], "ref": ref}
	stubLen, f := canonLen(stub)
	if f != nil {
		return nil, "", f
	}
	itemLen, f := canonLen(item)
	if f != nil {
		return nil, "", f
	}
	if stubLen >= itemLen {
		return nil, "", nil
	}
	return stub, ref, nil
}
