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

// Show returns a setting of m's session.
func Show(m *Manager, name string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ctx, cancel := m.call()
	defer cancel()
	var v string
	err := m.conn.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&v)
	return v, err
}
