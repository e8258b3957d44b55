package pg_test

import (
	"testing"

	"pushform/state"
	"pushform/state/pg/pgtest"
	"pushform/state/statetest"
)

func TestManagerConformance(t *testing.T) {
	t.Parallel()
	statetest.TestManager(t, func(t *testing.T) state.Manager {
		return pgtest.Open(t, pgtest.Options(t))
	})
}
