package pg

// BackendPID returns the server process of m's connection, for tests that
// kill it.
func BackendPID(m *Manager) uint32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.conn.PgConn().PID()
}

// LockKey returns the key of m's advisory lock.
func LockKey(m *Manager) int64 { return m.key }
