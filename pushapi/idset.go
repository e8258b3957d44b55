package pushapi

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/maphash"
)

// idSet is the set of user ids a recipient list has given so far, to drop
// duplicates across pages. It costs about 22 bytes an id at ten million
// (a map[string]struct{} costs 45 on top of the strings): the ids' bytes
// are kept in arena blocks, and an open-addressing table holds where each
// one is with the top 32 bits of its hash. Those bits are also where it
// goes in the table, so growing the table needs no hashing, and the bits
// left over tell most neighbours apart without touching the arena.
//
// Lists usually come sorted (a database's index order): while every id is
// greater than the one before, none can repeat, and the set only appends
// to the arena (the ids' bytes and a length each, no table). The table is
// built from the arena at the first id out of order. Hashing a million ids
// into the table cost 240 ns each in an apply, mostly cache misses; the
// sorted path costs 16.
type idSet struct {
	seed   maphash.Seed
	blocks [][]byte // append-only, blockSize each: what is stored never moves
	table  []uint64 // 0: empty; else tag<<refBits | (ref + 1); nil while sorted
	bits   int      // len(table) == 1 << bits
	n      int
	last   uint64 // while sorted: where the greatest id is, when n > 0
	// tagBits is how many top hash bits each entry keeps (64-refBits) and
	// maxBlocks how many arena blocks refs can name; tests lower them to
	// reach the paths that hash again and that refuse a list.
	tagBits, maxBlocks int
}

const (
	blockBits = 20 // 1 MiB blocks; an id is at most MaxUserIDBytes
	blockSize = 1 << blockBits
	refBits   = 32 // block<<blockBits | offset, plus one: a 4 GiB arena
	refMask   = 1<<refBits - 1
	maxBlocks = 1 << (refBits - blockBits)
)

// errTooManyIDs is a recipient list whose ids fill the arena.
var errTooManyIDs = errors.New("the recipient list holds more than 4 GiB of user ids")

func newIDSet() *idSet {
	return &idSet{seed: maphash.MakeSeed(), tagBits: 64 - refBits, maxBlocks: maxBlocks}
}

// home is the first slot to try for hash h in a table of 1<<bits slots.
func home(h uint64, bits int) uint64 { return h >> (64 - bits) }

// add stores id and reports whether it was new.
func (s *idSet) add(id []byte) (bool, error) {
	if s.table == nil {
		if s.n == 0 || bytes.Compare(id, s.at(s.last)) > 0 {
			ref, ok := s.store(id)
			if !ok {
				return false, errTooManyIDs
			}
			s.last = ref
			s.n++
			return true, nil
		}
		s.index()
	}
	h := maphash.Bytes(s.seed, id)
	tag := h >> refBits
	mask := uint64(len(s.table) - 1)
	for i := home(h, s.bits); ; i = (i + 1) & mask {
		e := s.table[i]
		if e == 0 {
			if 4*(s.n+1) > 3*len(s.table) {
				s.grow()
				return s.add(id)
			}
			ref, ok := s.store(id)
			if !ok {
				return false, errTooManyIDs
			}
			s.table[i] = tag<<refBits | (ref + 1)
			s.n++
			return true, nil
		}
		if e>>refBits == tag && bytes.Equal(s.at(e&refMask-1), id) {
			return false, nil
		}
	}
}

// store appends id (length first) to the arena and returns where; false
// when the arena is full.
func (s *idSet) store(id []byte) (uint64, bool) {
	need := binary.MaxVarintLen32 + len(id)
	if len(s.blocks) == 0 || len(s.blocks[len(s.blocks)-1])+need > blockSize {
		if len(s.blocks) == s.maxBlocks {
			return 0, false
		}
		s.blocks = append(s.blocks, make([]byte, 0, blockSize))
	}
	k := len(s.blocks) - 1
	b := s.blocks[k]
	ref := uint64(k)<<blockBits | uint64(len(b))
	b = binary.AppendUvarint(b, uint64(len(id)))
	s.blocks[k] = append(b, id...)
	return ref, true
}

// at returns the id stored at ref.
func (s *idSet) at(ref uint64) []byte {
	b := s.blocks[ref>>blockBits][ref&(blockSize-1):]
	n, k := binary.Uvarint(b)
	return b[k : k+int(n)]
}

// index builds the table from the arena, when the ids stop coming in
// order: they are all distinct, so each goes in the first free slot.
func (s *idSet) index() {
	s.bits = 10
	for 4*(s.n+1) > 3<<s.bits {
		s.bits++
	}
	s.table = make([]uint64, 1<<s.bits)
	mask := uint64(len(s.table) - 1)
	for k, b := range s.blocks {
		for off := 0; off < len(b); {
			n, w := binary.Uvarint(b[off:])
			ref := uint64(k)<<blockBits | uint64(off)
			h := maphash.Bytes(s.seed, b[off+w:off+w+int(n)])
			i := home(h, s.bits)
			for s.table[i] != 0 {
				i = (i + 1) & mask
			}
			s.table[i] = h>>refBits<<refBits | (ref + 1)
			off += w + int(n)
		}
	}
}

func (s *idSet) grow() {
	old := s.table
	s.table = make([]uint64, 2*len(old))
	s.bits++
	mask := uint64(len(s.table) - 1)
	for _, e := range old {
		if e == 0 {
			continue
		}
		h := e >> refBits << refBits // the tag is the hash's top bits
		if s.bits > s.tagBits {      // more slots than tag bits: hash again
			h = maphash.Bytes(s.seed, s.at(e&refMask-1))
		}
		i := home(h, s.bits)
		for s.table[i] != 0 {
			i = (i + 1) & mask
		}
		s.table[i] = e
	}
}
