// Package bucket assigns targets to the splits of a block (rollout stages,
// variants, a holdout) by a stable hash of the target id and a salt, so a
// plan, a re-plan and another runner always agree, and adding targets to
// an audience never moves the ones already there.
//
// The salt is hashed with 64-bit FNV-1a and a NUL byte; the id's length
// and its bytes, eight at a time, are folded in by multiply-xorshift, and
// the splitmix64 finalizer spreads ids differing in one character over
// the whole range. It is fixed: changing it would move every
// target of every rollout in flight.
package bucket

import "math/bits"

// Scale is the resolution of a point: Point returns a value in
// [0, Scale), so a percentage is precise to 1/10,000 of a percent.
const Scale = 1_000_000

const (
	offset64 = 14695981039346656037
	prime64  = 1099511628211
	golden   = 0x9e3779b97f4a7c15 // 2^64 / phi, an odd multiplier
)

// Hasher hashes ids under one salt; the salt's part is computed once.
type Hasher struct {
	seed uint64
}

// New returns the Hasher of salt.
func New(salt string) Hasher {
	h := uint64(offset64)
	for i := 0; i < len(salt); i++ {
		h ^= uint64(salt[i])
		h *= prime64
	}
	h *= prime64 // the NUL separator: "ab"+"c" and "a"+"bc" differ
	return Hasher{seed: h}
}

// Sum is the 64-bit hash of id under the Hasher's salt. It takes eight
// bytes of the id at a time: a few nanoseconds an id, so a million-target
// audience is walked in milliseconds.
func (h Hasher) Sum(id string) uint64 {
	x := h.seed ^ uint64(len(id))*prime64
	for len(id) >= 8 {
		c := uint64(id[0]) | uint64(id[1])<<8 | uint64(id[2])<<16 | uint64(id[3])<<24 |
			uint64(id[4])<<32 | uint64(id[5])<<40 | uint64(id[6])<<48 | uint64(id[7])<<56
		x = (x ^ c) * golden
		x ^= x >> 29
		id = id[8:]
	}
	if len(id) > 0 {
		var c uint64
		for i := 0; i < len(id); i++ {
			c |= uint64(id[i]) << (8 * i)
		}
		x = (x ^ c) * golden
		x ^= x >> 29
	}
	// splitmix64's finalizer
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Point places id in [0, Scale): the target is in a split covering
// fraction f of the audience when Point < Cut(f).
func (h Hasher) Point(id string) uint32 {
	// Multiply-shift maps the hash onto the range without modulo bias.
	hi, _ := bits.Mul64(h.Sum(id), Scale)
	return uint32(hi)
}

// Cut is the first point outside a split covering fraction f (0..1) of
// the audience, counted from 0.
func Cut(f float64) uint32 {
	switch {
	case f <= 0:
		return 0
	case f >= 1:
		return Scale
	}
	return uint32(f*Scale + 0.5)
}
