package local

// Writing the journal: the descriptor kept while the lock is held, the
// zeros laid down ahead of a format-3 journal, the fsyncs concurrent
// appends share, and cutting back what a failed write left.

import (
	"fmt"
	"os"
)

// syncJournal fsyncs jf, written up to end.
func (f *File) syncJournal(jf *os.File, end int64) error {
	f.syncMu.Lock()
	defer f.syncMu.Unlock()
	return f.syncLocked(jf, end)
}

// syncLocked fsyncs jf, written up to end, and counts it; f.syncMu is
// held.
func (f *File) syncLocked(jf *os.File, end int64) error {
	f.syncs++
	if err := dataSync(jf); err != nil {
		return err
	}
	f.synced = max(f.synced, end)
	return nil
}

// syncTo is the fsync of entries written to jf at [start, end), run
// without f.mu. An fsync that ended after end already covered them; if
// the journal was closed meanwhile, closeJournal synced them.
func (f *File) syncTo(jf *os.File, start, end int64) error {
	f.syncMu.Lock()
	if jf != f.syncFile { // closed meanwhile, by closeJournal, which synced it
		err := f.closeErr
		f.syncMu.Unlock()
		return err
	}
	if f.synced >= end {
		f.syncMu.Unlock()
		return nil
	}
	err := f.syncLocked(jf, end)
	f.syncMu.Unlock()
	if err == nil {
		return nil
	}
	// Cut the entries back off when nothing was written after them;
	// otherwise the journal keeps them (read as sent: unknown).
	f.mu.Lock()
	defer f.mu.Unlock()
	if jf == f.jf && f.written == end {
		return f.undoAppend(jf, start, fmt.Errorf("syncing state journal: %w", err))
	}
	f.checked = false
	return fmt.Errorf("syncing state journal: %w (entries written after these keep them in the journal)", err)
}

// zeroAhead is how far ahead of its writes a kept format-3 journal is at
// most laid down as zeros. Written over, the journal keeps its size and
// blocks, so each fdatasync writes the data alone, where an appending one
// also commits the file's new size (on this VM's ext4, a million-target
// apply at 0 ms took 4% less wall time). ReadJournalWith says how a reader
// finds the end. A line this long or longer is written past the end.
const zeroAhead = 4 << 20

// zeros is what layZeros writes; never written to.
var zeros [64 << 10]byte

// writeJournal writes buf to jf at start, the end of what is written. A
// kept descriptor (held) writes at the offset, over zeros laid down ahead
// for a format-3 journal; another appends.
func (f *File) writeJournal(jf *os.File, held bool, buf []byte, start int64) error {
	if !held {
		_, err := jf.Write(buf)
		return err
	}
	end := start + int64(len(buf))
	if f.jformat >= 3 && end > f.laid && len(buf) < zeroAhead {
		// As far ahead as the journal is long, from 64 KiB to zeroAhead:
		// a short journal (a small run, a test) lays down little. Zeros
		// only spare fsyncs work: where they do not fit (a full disk),
		// buf is written past the end, as an append would.
		f.layZeros(jf, start+min(max(start, 64<<10), zeroAhead))
	}
	if _, err := jf.WriteAt(buf, start); err != nil {
		return err
	}
	f.laid = max(f.laid, end)
	return nil
}

// layZeros extends jf with zeros up to size, or as far as they fit. They
// need no fsync of their own: the next one makes them durable with the
// data written over them, and until then a crash leaves the file shorter
// or its new blocks zero.
func (f *File) layZeros(jf *os.File, size int64) {
	for f.laid < size {
		n, err := jf.WriteAt(zeros[:min(int64(len(zeros)), size-f.laid)], f.laid)
		f.laid += int64(n)
		if err != nil {
			// WriteAt counts nothing of a write cut short by an error;
			// the size says how far the zeros got, for closeJournal to
			// take them all away.
			if fi, serr := jf.Stat(); serr == nil {
				f.laid = max(f.laid, fi.Size())
			}
			return
		}
	}
}

// maxKeptBuffer bounds the encoding buffer a File keeps between appends: a
// request's entries take a few KiB; a recipients snapshot of millions of
// ids is written once and not worth keeping.
const maxKeptBuffer = 1 << 20

// openJournal returns the journal open for writing at f.written, from the
// descriptor kept since an earlier append while the path still names that
// file: one stat instead of an open, a stat and a close per append. The
// descriptor is kept while the lock is held (held), and then written at
// offsets; otherwise it appends. f.mu is held.
func (f *File) openJournal(held, verify bool) (*os.File, error) {
	if f.jf != nil {
		if !verify {
			return f.jf, nil
		}
		fi, err := os.Stat(f.JournalPath())
		if err == nil && os.SameFile(fi, f.jfInfo) {
			return f.jf, nil
		}
		if err := f.closeJournal(); err != nil {
			return nil, err
		}
	}
	flags := os.O_WRONLY | os.O_CREATE
	if !held {
		flags |= os.O_APPEND
	}
	jf, err := os.OpenFile(f.JournalPath(), flags, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening state journal: %w", err)
	}
	fi, err := jf.Stat()
	if err != nil {
		jf.Close()
		return nil, fmt.Errorf("opening state journal: %w", err)
	}
	// Its size is where it ends: checkJournalTail cut off what a crash
	// left, and closeJournal the zeros laid down ahead.
	f.jf, f.jfInfo, f.written, f.laid = jf, fi, fi.Size(), fi.Size()
	f.syncMu.Lock()
	f.syncFile, f.synced = jf, fi.Size() // what was written before is another File's to sync
	f.syncMu.Unlock()
	return jf, nil
}

// closeJournal makes what was written to the kept journal descriptor
// durable and closes it; f.mu is held.
func (f *File) closeJournal() error {
	if f.watch != nil {
		f.watch.close()
		f.watch = nil
	}
	if f.jf == nil {
		return nil
	}
	f.syncMu.Lock()
	defer f.syncMu.Unlock()
	var err error
	if f.laid > f.written {
		// The zeros laid down ahead go, so the size is where the journal
		// ends for the next open. Should that fail, the next append reads
		// the journal for its end first.
		if terr := f.jf.Truncate(f.written); terr != nil {
			f.checked = false
		}
	}
	if f.written > f.synced {
		if err = f.syncLocked(f.jf, f.written); err != nil {
			err = fmt.Errorf("syncing state journal: %w", err)
		}
	}
	if cerr := f.jf.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("closing state journal: %w", cerr)
	}
	f.closeErr = err
	f.jf, f.jfInfo, f.written, f.laid, f.synced, f.syncFile = nil, nil, 0, 0, 0, nil
	return err
}

// undoAppend cuts the journal back to size after a failed write or sync
// (a full disk, an I/O error), so it holds exactly the entries whose
// Append returned nil: none of these is recorded. When even that fails,
// the next Append checks the tail again first.
func (f *File) undoAppend(jf *os.File, size int64, err error) error {
	f.checked = false
	f.written, f.laid = size, size
	if f.lockFile == nil {
		defer f.closeJournal()
	}
	if terr := jf.Truncate(size); terr != nil {
		return fmt.Errorf("%w; cutting the journal back failed too (%v): it may hold part of these entries", err, terr)
	}
	if serr := jf.Sync(); serr != nil {
		return fmt.Errorf("%w; syncing the journal after cutting it back failed too (%v): it may hold part of these entries", err, serr)
	}
	return fmt.Errorf("%w (the journal was cut back to the entries written before)", err)
}
