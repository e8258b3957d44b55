package local

// Kill drops f's lock as a killed process does: the operating-system lock
// is released, the lock info stays.
func Kill(f *File) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lockFile != nil {
		f.lockFile.Close()
		f.lockFile, f.lockID = nil, ""
	}
}

// JournalSyncs is how many times f has fsynced the journal.
func JournalSyncs(f *File) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.syncs
}

// PathChecks is how many appends of f checked the snapshot's and the
// journal's paths.
func PathChecks(f *File) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.checks
}
