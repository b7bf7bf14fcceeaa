// Package heaptest measures what a value keeps reachable, for the tests
// that bound memory without timing anything: the live heap after a
// collection with the value held, less the live heap once it is dropped,
// per item it holds. It is not internal so that the harness and ci tests
// measure the same way as the engine's; nothing outside tests imports it.
package heaptest

import "runtime"

// Live is the heap still reachable after a collection. It collects twice:
// the first collection only moves sync.Pool contents aside, the second
// frees them, so pooled buffers do not count as held.
func Live() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// FreedEach is how many bytes per item were freed since Live returned
// held: call it once the value holding n items is dead (not used again),
// so the collection it runs frees the value.
func FreedEach(held uint64, n int) int64 {
	return (int64(held) - int64(Live())) / int64(n)
}
