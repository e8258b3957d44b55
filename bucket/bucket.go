// Package bucket assigns targets to the splits of a block (rollout stages,
// variants, a holdout) by a stable hash of the target id and a salt, so a
// plan, a re-plan and another runner always agree, and adding targets to
// an audience never moves the ones already there.
//
// The hash is 64-bit FNV-1a over salt, a NUL byte and the id, finished
// with the splitmix64 mixer so that ids differing in their last character
// spread over the whole range. It is fixed: changing it would move every
// target of every rollout in flight.
package bucket

import "math/bits"

// Scale is the resolution of a point: Point returns a value in
// [0, Scale), so a percentage is precise to 1/10,000 of a percent.
const Scale = 1_000_000

const (
	offset64 = 14695981039346656037
	prime64  = 1099511628211
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

// Sum is the 64-bit hash of id under the Hasher's salt.
func (h Hasher) Sum(id string) uint64 {
	x := h.seed
	for i := 0; i < len(id); i++ {
		x ^= uint64(id[i])
		x *= prime64
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
