package statetest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"pushform/state"
)

// LockHolder is a child process holding a lock until it is killed: a
// holder that runs no cleanup.
type LockHolder struct {
	Cmd *exec.Cmd
	// ID is the id of the lock it took.
	ID     string
	killed bool
}

// StartLockHolder runs this test binary's test named test, with env added
// to the environment, and waits until it holds the lock: the test calls
// HoldLock. The process is killed when t ends, if not before.
func StartLockHolder(t *testing.T, test string, env ...string) *LockHolder {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &LockHolder{Cmd: cmd}
	t.Cleanup(func() {
		if !h.killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the lock holder: %v", err)
	}
	id, ok := strings.CutPrefix(strings.TrimSpace(line), "locked ")
	if !ok {
		t.Fatalf("the lock holder said %q", line)
	}
	h.ID = id
	return h
}

// HoldLock is the lock holder's side: it takes the lock with lock, says
// so, and waits to be killed.
func HoldLock(lock func() (string, error)) {
	id, err := lock()
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("locked", id)
	select {}
}

// CheckRefused checks that l refuses the lock, naming h as the holder.
func (h *LockHolder) CheckRefused(t *testing.T, l state.Locker) {
	t.Helper()
	_, err := l.Lock(context.Background(), state.NewLockInfo("apply"))
	var le *state.LockError
	if !errors.As(err, &le) || le.Info.Pid != h.Cmd.Process.Pid || le.Info.ID != h.ID {
		t.Fatalf("Lock while the child holds it: err = %v; want a *LockError naming pid %d", err, h.Cmd.Process.Pid)
	}
}

// Kill kills the holder with SIGKILL (no cleanup runs) and waits for it.
func (h *LockHolder) Kill(t *testing.T) {
	t.Helper()
	if err := h.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	h.Cmd.Wait()
	h.killed = true
}
