package local

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"pushform/atomicfile"
	"pushform/state"
	"pushform/state/statefile"
)

// File is the local file backend. For a state at PATH it keeps:
//
//	PATH            the snapshot, replaced atomically (temp file, fsync, rename)
//	PATH.backup     the previous snapshot
//	PATH.journal    entries appended since the snapshot, one checksummed line each
//	PATH.lock       the file an operating-system lock is taken on
//	PATH.lock.info  who holds that lock
//
// All files are created with mode 0600. A File is safe for use by several
// goroutines.
type File struct {
	path string

	mu       sync.Mutex
	lineage  string // of a journal-only state, so repeated Reads agree
	checked  bool   // journal tail checked by this File
	lockFile *os.File
	lockID   string
	jformat  int // format of the journal on disk; 0 until known
	// seen is the snapshot this File last read or persisted: Append
	// extends no other.
	seen state.Head
	// stale is the lock info the last Lock found left behind by a holder
	// that ended without unlocking.
	stale *state.LockInfo

	commit state.GroupCommit[journalItem]
	// jf is the journal, kept open between appends while the lock is
	// held (jfInfo is what it was when opened, to notice the path
	// replaced); written is the offset its last write ended at. While
	// kept, jf is written at offsets, over zeros laid down ahead up to
	// laid (see layZeros).
	jf      *os.File
	jfInfo  os.FileInfo
	written int64
	laid    int64
	wbuf    []byte            // the last append's encoding buffer, reused
	reuse   statefile.IDReuse // intents' encoded ids, for their outcomes
	// syncMu guards what the fsyncs of jf, which run without mu (see
	// appendLocked), share: synced is the offset the last one covered,
	// closeErr what the last closeJournal's fsync returned, syncs their
	// count (for tests). Taken after mu, never the other way round.
	syncMu   sync.Mutex
	syncFile *os.File // jf, while open
	synced   int64
	closeErr error
	syncs    int
	checks   int // appends that checked the snapshot's and journal's paths (for tests)
	// snap is the snapshot's header as Append last checked it, and the
	// file it was read from (nil: there was none): while the file is the
	// same, its header is.
	snap       os.FileInfo
	snapHeader statefile.Header
	snapKnown  bool
	// watch, while the journal is kept open, says whether the snapshot
	// or the journal's path may have changed since the last append, which
	// checks them again only then; noWatch: none could be set up.
	watch   *dirWatch
	noWatch bool

	pauseAt string // test-only: see PauseEnv
	// link makes hard links; nil is os.Link. Tests set it to fail, as on
	// file systems without hard links.
	link func(oldname, newname string) error
}

// PauseEnv names a test-only hook, which the caller reads and passes in
// Options.PauseAt. When the environment variable holds the name of a phase, the File writes
// "pushform-test: paused at PHASE" to stderr on reaching that phase and
// then waits to be killed, so e2e/crash_test.go can kill apply inside a
// phase as a fact rather than a timing guess. Phases:
//
//	read             the state was read (under the lock, before planning)
//	persist-write    a new snapshot is in its temp file, not yet renamed
//	persist-renamed  the new snapshot is in place, the journal not yet removed
const PauseEnv = "PUSHFORM_TEST_PAUSE_AT"

// pause implements PauseEnv.
func (f *File) pause(phase string) {
	if f.pauseAt != phase {
		return
	}
	fmt.Fprintf(os.Stderr, "pushform-test: paused at %s\n", phase)
	for {
		time.Sleep(time.Hour)
	}
}

var (
	_ state.Manager       = (*File)(nil)
	_ state.ForceUnlocker = (*File)(nil)
)

// Options tune a File.
type Options struct {
	// PauseAt is a phase to pause at (see PauseEnv); "" for none.
	PauseAt string
}

// NewFile returns the file backend for the state at path.
func NewFile(path string) *File {
	return NewFileWith(path, Options{})
}

// NewFileWith is NewFile with options.
func NewFileWith(path string, o Options) *File {
	return &File{path: path, pauseAt: o.PauseAt}
}

// Path returns the snapshot path.
func (f *File) Path() string { return f.path }

// BackupPath returns the path of the previous snapshot.
func (f *File) BackupPath() string { return f.path + ".backup" }

// JournalPath returns the path of the journal.
func (f *File) JournalPath() string { return f.path + ".journal" }

// LockPath returns the path of the file the lock is taken on.
func (f *File) LockPath() string { return f.path + ".lock" }

// LockInfoPath returns the path of the lock info file.
func (f *File) LockInfoPath() string { return f.path + ".lock.info" }

// Read implements Reader.
func (f *File) Read() (*state.State, error) {
	return f.readPaused(false)
}

// ReadCompact is Read returning a compact state (see state.State.Compact):
// no map of targets is built, which plan and apply need at millions of
// targets.
func (f *File) ReadCompact() (*state.State, error) {
	return f.readPaused(true)
}

func (f *File) readPaused(compact bool) (*state.State, error) {
	s, err := f.read(compact)
	if err == nil {
		f.pause("read")
	}
	return s, err
}

func (f *File) read(compact bool) (*state.State, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, err := f.readSnapshot(compact)
	if err != nil {
		return nil, err
	}
	seen := state.HeadOf(s)
	s, err = f.replayJournal(s, compact)
	if err != nil {
		return nil, err
	}
	f.seen = seen
	return s, nil
}

// errStale stops reading a journal already folded into the snapshot.
var errStale = errors.New("stale journal")

// replayJournal replays the journal over the snapshot s (nil when there is
// none); f.mu is held. Each entry is folded as it is read, once the header
// says the journal extends s: a stale journal never touches the state, and
// the journal of an apply to millions of targets is never held whole.
func (f *File) replayJournal(s *state.State, compact bool) (*state.State, error) {
	jf, err := os.Open(f.JournalPath())
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading state journal: %w", err)
	}
	defer jf.Close()

	// The header is checked against the snapshot before any entry is
	// folded: a stale journal must not touch the state at all.
	out := s
	var hdr statefile.JournalHeader
	n := 0
	_, _, err = statefile.ReadJournalWith(jf, func(h statefile.JournalHeader) error {
		hdr = h
		if s == nil {
			return nil // the state starts with the first entry
		}
		switch {
		case h.Lineage != s.Lineage:
			return &mismatch{fmt.Errorf("state journal %s belongs to lineage %q, but %s has lineage %q", f.JournalPath(), h.Lineage, f.path, s.Lineage)}
		case h.Serial < s.Serial:
			return errStale // already folded into the snapshot
		case h.Serial > s.Serial:
			return &mismatch{fmt.Errorf("state journal %s extends serial %d, but %s has serial %d (was an older snapshot restored?)", f.JournalPath(), h.Serial, f.path, s.Serial)}
		}
		return nil
	}, func(e state.Entry) error {
		if out == nil {
			out = &state.State{Version: state.FormatVersion, Lineage: hdr.Lineage, Serial: hdr.Serial, Environment: hdr.Environment,
				Messages: map[string]*state.Message{}, Compact: compact}
			if out.Lineage == "" {
				out.Lineage = state.NewLineage()
			}
			f.lineage = out.Lineage
		}
		n++
		if err := out.ApplyEntry(e); err != nil {
			return &replayError{n: n, err: err}
		}
		return nil
	})
	var re *replayError
	var mm *mismatch
	switch {
	case errors.Is(err, errStale):
		return s, nil
	case errors.As(err, &re):
		return nil, fmt.Errorf("replaying state journal %s, entry %d: %w", f.JournalPath(), re.n, re.err)
	case errors.As(err, &mm):
		return nil, mm.err
	case err != nil:
		return nil, f.journalError(err)
	}
	return out, nil
}

// mismatch is a journal that extends another snapshot than the one read.
type mismatch struct{ err error }

func (e *mismatch) Error() string { return e.err.Error() }

// replayError is an entry the state refused while replaying.
type replayError struct {
	n   int
	err error
}

func (e *replayError) Error() string { return e.err.Error() }

func (f *File) readSnapshot(compact bool) (*state.State, error) {
	r, err := os.Open(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading state: %w", err)
	}
	defer r.Close()
	decode := statefile.Decode
	if compact {
		decode = statefile.DecodeCompact
	}
	s, err := decode(r)
	if err != nil {
		return nil, f.corrupt(err)
	}
	return s, nil
}

// corrupt explains why the snapshot cannot be read: a newer format, or
// damage, with the backup offered only once it has been read whole.
func (f *File) corrupt(err error) error {
	var nf *statefile.NewerFormatError
	if errors.As(err, &nf) {
		return fmt.Errorf("state file %s was %w", f.path, err)
	}
	var td *statefile.TrailingDataError
	if errors.As(err, &td) {
		return fmt.Errorf("state file %s has data appended after its end: %w. Nothing was read or sent. "+
			"Run 'pushform state repair --state %s': it moves the appended bytes to %s.rejected and cuts the file where its state ends", f.path, err, f.path, f.path)
	}
	b, berr := os.Open(f.BackupPath())
	if errors.Is(berr, fs.ErrNotExist) {
		return fmt.Errorf("state file %s is corrupt: %v; there is no backup (%s does not exist)", f.path, err, f.BackupPath())
	}
	if berr == nil {
		_, berr = statefile.Decode(b)
		b.Close()
	}
	if berr == nil {
		return fmt.Errorf("state file %s is corrupt: %v; the previous state is in %s", f.path, err, f.BackupPath())
	}
	return fmt.Errorf("state file %s is corrupt: %v; its backup %s cannot be read either (%v), so no earlier state is left to go back to. "+
		"Move both aside to start a new state: the next plan then knows nothing of what was sent and plans every send again", f.path, err, f.BackupPath(), berr)
}

// journalError explains why the journal cannot be used, and what to do.
func (f *File) journalError(err error) error {
	var nf *statefile.NewerFormatError
	if errors.As(err, &nf) {
		return fmt.Errorf("state journal %s was %w", f.JournalPath(), err)
	}
	var le *statefile.JournalLineError
	if !errors.As(err, &le) {
		return fmt.Errorf("reading state journal %s: %w", f.JournalPath(), err)
	}
	kept, keeps := "No line is intact", "it keeps none"
	if le.Line > 1 {
		kept = fmt.Sprintf("Lines 1 to %d are intact", le.Line-1)
		keeps = fmt.Sprintf("it keeps lines 1 to %d", le.Line-1)
	}
	return fmt.Errorf("state journal %s is damaged: %w. %s; the records from line %d on cannot be trusted, so nothing was read or sent. "+
		"Run 'pushform state repair --state %s': %s, moves the others to %s.rejected "+
		"and says how many delivered outcomes they record (it asks for --force before dropping any)",
		f.JournalPath(), le, kept, le.Line, f.path, keeps, f.JournalPath())
}

// storedHeader returns the header of the snapshot on disk, or ok=false when
// there is none. It does not decode the whole snapshot (Persist would pay
// for it on every write) but does refuse a truncated one, so a damaged
// snapshot never replaces a good backup.
func (f *File) storedHeader() (h statefile.Header, ok bool, err error) {
	r, err := os.Open(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return h, false, nil
	}
	if err != nil {
		return h, false, fmt.Errorf("reading state: %w", err)
	}
	defer r.Close()
	fi, err := r.Stat()
	if err != nil {
		return h, false, fmt.Errorf("reading state: %w", err)
	}
	if err := statefile.CheckEnd(r, fi.Size()); err != nil {
		return h, false, f.corrupt(err)
	}
	h, err = statefile.DecodeHeader(r)
	if err != nil {
		return h, false, f.corrupt(err)
	}
	return h, true, nil
}

// Append implements Journal. Entries of one call are written with one write
// and one fsync. Calls that arrive while another call's sync is under way
// form a group that shares the next write and fsync (group commit), so
// concurrent appenders pay for far fewer syncs than calls. An entry of
// many ids is encoded before the journal is locked (encodeUnlockedIDs).
func (f *File) Append(entries ...state.Entry) error {
	items := make([]journalItem, len(entries))
	for i, e := range entries {
		items[i].e = e
		if idCount(e) < encodeUnlockedIDs {
			continue
		}
		f.mu.Lock()
		format := f.jformat
		f.mu.Unlock()
		if format == 0 {
			continue // the journal's format is known once it is written
		}
		line, err := statefile.AppendEntryLine(nil, e, format)
		if err != nil {
			return fmt.Errorf("encoding state journal entry: %w", err)
		}
		items[i].line, items[i].format = line, format
	}
	return f.commit.DoThenSync(&f.mu, items, f.appendLocked)
}

// journalItem is an entry to append, and its journal line when it was
// encoded before the journal was locked (in format).
type journalItem struct {
	e      state.Entry
	line   []byte
	format int
}

// encodeUnlockedIDs is how many ids make an entry (a recipients list, the
// targets a plan records as up to date) be encoded before the journal is
// locked: a million take 10 ms, and the requests' entries, written
// meanwhile, need not wait for them.
const encodeUnlockedIDs = 1 << 14

// idCount is how many ids e's items name.
func idCount(e state.Entry) int {
	n := 0
	for _, it := range e.Items {
		n += len(it.Targets)
	}
	return n
}

// appendLocked writes entries to the journal with one write and, unless
// they are all outcomes (state.NeedsSync), one fsync, which also makes
// every outcome written before durable; f.mu is held. While the lock is
// held, that fsync is returned to run once f.mu is released, so the
// outcomes of other requests are written meanwhile rather than queue
// behind it (and free their batches' slots in the executor at once).
func (f *File) appendLocked(items []journalItem) (sync func() error, err error) {
	if err := f.checkJournalTail(); err != nil {
		return nil, err
	}
	// Only a lock holder keeps the descriptor, and so may leave outcomes
	// for a later sync: Unlock or Persist syncs them at the latest.
	held := f.lockFile != nil
	verify := true
	switch {
	case !held:
	case f.watch != nil && f.jf != nil && !f.watch.changed():
		verify = false
	case !f.noWatch:
		// Set up afresh (on the snapshot there is now) before the paths
		// are checked: nothing that happens after the check goes unseen.
		if f.watch != nil {
			f.watch.close()
		}
		f.watch = newDirWatch(f.path, f.JournalPath())
		f.noWatch = f.watch == nil
	}
	sh, exists := f.snapHeader, f.snap != nil
	if verify || !f.snapKnown {
		f.checks++
		if sh, exists, err = f.snapshotHeader(); err != nil {
			return nil, err
		}
		if err := f.checkSeen(sh, exists); err != nil {
			return nil, err
		}
	}
	jf, err := f.openJournal(held, verify)
	if err != nil {
		return nil, err
	}
	buf := f.wbuf[:0]
	start := f.written
	fresh := start == 0
	if fresh {
		h := f.journalHeader(sh, exists)
		if buf, err = statefile.AppendJournalLine(buf, h); err != nil {
			return nil, fmt.Errorf("encoding state journal header: %w", err)
		}
		f.jformat = h.Journal
	} else if f.jformat == 0 {
		// A journal left by an earlier run: continue in its format.
		if f.jformat, err = f.storedJournalFormat(); err != nil {
			return nil, err
		}
	}
	needsSync := false
	for _, it := range items {
		needsSync = needsSync || state.NeedsSync(it.e)
		switch {
		case it.line == nil || it.format != f.jformat:
			if buf, err = statefile.AppendEntryLineReusing(buf, it.e, f.jformat, &f.reuse); err != nil {
				return nil, fmt.Errorf("encoding state journal entry: %w", err)
			}
		case len(items) == 1 && len(buf) == 0:
			buf = it.line // written as it is: ten million ids are 20 MB
		default:
			buf = append(buf, it.line...)
		}
	}
	if cap(buf) <= maxKeptBuffer {
		f.wbuf = buf // a run's entries are alike: the next append fits
	}
	if err := f.writeJournal(jf, held, buf, start); err != nil {
		return nil, f.undoAppend(jf, start, err)
	}
	end := start + int64(len(buf))
	f.written = end
	switch {
	case held && !fresh && !needsSync:
		return nil, nil
	case held && !fresh:
		return func() error { return f.syncTo(jf, start, end) }, nil
	}
	if err := f.syncJournal(jf, end); err != nil {
		return nil, f.undoAppend(jf, start, err)
	}
	if fresh {
		if err := atomicfile.SyncDir(filepath.Dir(f.path)); err != nil {
			return nil, fmt.Errorf("syncing state directory: %w", err)
		}
	}
	if !held {
		return nil, f.closeJournal()
	}
	return nil, nil
}

// snapshotHeader is storedHeader for Append: while the snapshot is the
// file it checked last (same file, size and modification time: Persist
// always renames a new file into place), it is not read again. f.mu is
// held.
func (f *File) snapshotHeader() (statefile.Header, bool, error) {
	fi, err := os.Stat(f.path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return statefile.Header{}, false, fmt.Errorf("reading state: %w", err)
	}
	if f.snapKnown {
		switch {
		case fi == nil && f.snap == nil:
			return f.snapHeader, false, nil
		case fi != nil && f.snap != nil && os.SameFile(fi, f.snap) && fi.Size() == f.snap.Size() && fi.ModTime().Equal(f.snap.ModTime()):
			return f.snapHeader, true, nil
		}
	}
	sh, exists, err := f.storedHeader()
	if err != nil {
		f.snapKnown = false
		return sh, exists, err
	}
	f.snap, f.snapHeader, f.snapKnown = fi, sh, true
	if !exists {
		f.snap = nil
	}
	return sh, exists, nil
}

// storedJournalFormat reads the format from the header of the journal on
// disk, which checkJournalTail has found intact.
func (f *File) storedJournalFormat() (int, error) {
	jf, err := os.Open(f.JournalPath())
	if err != nil {
		return 0, fmt.Errorf("reading state journal: %w", err)
	}
	defer jf.Close()
	start := make([]byte, 4096)
	n, err := io.ReadFull(jf, start)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return 0, fmt.Errorf("reading state journal: %w", err)
	}
	format := statefile.JournalFormatOf(start[:n])
	if format > statefile.JournalFormat {
		return 0, f.journalError(&statefile.NewerFormatError{What: "journal", Format: format, Newest: statefile.JournalFormat})
	}
	if format < 1 {
		return 0, fmt.Errorf("state journal %s has no usable header", f.JournalPath())
	}
	return format, nil
}

// journalHeader names the snapshot a new journal extends: the header sh of
// the one on disk, when it exists.
func (f *File) journalHeader(sh statefile.Header, exists bool) statefile.JournalHeader {
	if !exists {
		if f.lineage == "" {
			f.lineage = state.NewLineage()
		}
		return statefile.JournalHeader{Journal: statefile.JournalFormat, Lineage: f.lineage}
	}
	return statefile.JournalHeader{Journal: statefile.JournalFormat, Lineage: sh.Lineage, Serial: sh.Serial, Environment: sh.Environment}
}

// checkSeen refuses to extend a snapshot other than the one this File last
// read or persisted: another process wrote in between, and a run that
// started from the old one must record (and so send) nothing. Before the
// first Read or Persist, Append extends what is on disk.
func (f *File) checkSeen(sh statefile.Header, exists bool) error {
	now := state.Head{Known: true}
	if exists {
		now = state.Head{Known: true, Exists: true, Lineage: sh.Lineage, Serial: sh.Serial}
	}
	return f.seen.Stale(f.path, now)
}

// checkJournalTail cuts a line torn by an earlier crash off the journal
// before this File first appends, so it does not become a corrupt middle
// line.
func (f *File) checkJournalTail() error {
	if f.checked {
		return nil
	}
	jf, err := os.OpenFile(f.JournalPath(), os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		f.checked = true
		return nil
	}
	if err != nil {
		return fmt.Errorf("opening state journal: %w", err)
	}
	defer jf.Close()
	h, valid, err := statefile.ReadJournal(jf, func(state.Entry) error { return nil })
	if err != nil {
		sh, ok, serr := f.storedHeader()
		if serr != nil || !ok || h.Journal == 0 || h.Lineage != sh.Lineage || h.Serial >= sh.Serial {
			return f.journalError(err)
		}
		valid = 0 // already folded into the snapshot, damage and all
	} else if h.Journal != 0 {
		// A journal of an older serial was folded into the snapshot by a
		// Persist that died before removing it, and Read ignores it: new
		// entries appended to it would be ignored too. Start afresh.
		sh, ok, err := f.storedHeader()
		if err != nil {
			return err
		}
		if ok && h.Lineage == sh.Lineage && h.Serial < sh.Serial {
			valid = 0
		}
	}
	fi, err := jf.Stat()
	if err != nil {
		return fmt.Errorf("checking state journal: %w", err)
	}
	if fi.Size() > valid {
		if err := jf.Truncate(valid); err != nil {
			return fmt.Errorf("cutting a torn line or a stale journal off the state journal: %w", err)
		}
		if err := jf.Sync(); err != nil {
			return fmt.Errorf("syncing state journal: %w", err)
		}
	}
	f.checked = true
	return jf.Close()
}

// Persist implements Persister.
func (f *File) Persist(s *state.State) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	// The journal is made durable first: if this Persist fails, the
	// outcomes not yet synced are still recorded.
	if err := f.closeJournal(); err != nil {
		return err
	}
	sh, exists, err := f.storedHeader()
	if err != nil {
		return err
	}
	serial := s.Serial + 1
	if exists {
		if s.Lineage != sh.Lineage {
			return fmt.Errorf("%w: %s has lineage %q, this state has %q", state.ErrLineage, f.path, sh.Lineage, s.Lineage)
		}
		if s.Serial != sh.Serial {
			return fmt.Errorf("%w: %s has serial %d, this state was read at serial %d", state.ErrStaleSerial, f.path, sh.Serial, s.Serial)
		}
	}

	dir := filepath.Dir(f.path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(f.path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing state: %w", err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	defer tmp.Close()
	if err := tmp.Chmod(0o600); err != nil {
		return fmt.Errorf("writing state: %w", err)
	}
	out := *s
	out.Version = state.FormatVersion
	out.Serial = serial
	// The errors name the temp file: they are *PathErrors.
	if err := statefile.Encode(tmp, &out); err != nil {
		return fmt.Errorf("writing state: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("syncing state: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing state: %w", err)
	}
	f.pause("persist-write")
	if exists {
		if err := f.backup(); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp.Name(), f.path); err != nil {
		return fmt.Errorf("replacing state: %w", err)
	}
	if err := atomicfile.SyncDir(dir); err != nil {
		return fmt.Errorf("syncing state directory: %w", err)
	}
	s.Version = state.FormatVersion
	s.Serial = serial
	f.seen = state.HeadOf(s)
	f.pause("persist-renamed")
	// A crash here leaves a journal of an older serial, which Read ignores
	// and the next append starts afresh; so does a removal that a crash
	// undoes, which is why the directory is not synced again.
	if err := os.Remove(f.JournalPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("clearing state journal: %w", err)
	}
	f.checked = true
	return nil
}

// backup makes PATH.backup the current snapshot: a hard link renamed into
// place, so no moment exists without a snapshot or without a backup. Where
// links are not supported it copies.
func (f *File) backup() error {
	tmp := f.BackupPath() + ".tmp"
	os.Remove(tmp)
	link := os.Link
	if f.link != nil {
		link = f.link
	}
	if err := link(f.path, tmp); err != nil {
		if err := copyFile(f.path, tmp); err != nil {
			return fmt.Errorf("backing up state: %w", err)
		}
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		return fmt.Errorf("backing up state: %w", err)
	}
	if err := os.Rename(tmp, f.BackupPath()); err != nil {
		return fmt.Errorf("backing up state: %w", err)
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer out.Close()
	if _, err := io.Copy(out, in); err != nil {
		return err
	}
	if err := out.Sync(); err != nil {
		return err
	}
	return out.Close()
}
