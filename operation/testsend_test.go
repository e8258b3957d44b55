package operation

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestTestTargets: each id once, in the order first given; users and
// devices not together; at most one request's worth.
func TestTestTargets(t *testing.T) {
	many := make([]string, 501)
	for i := range many {
		many[i] = fmt.Sprintf("d%03d", i)
	}
	for _, c := range []struct {
		name                   string
		users, devices         []string
		wantUsers, wantDevices []string
		err                    string
	}{
		{name: "users repeated", users: []string{"u1", "u2", "u1"}, wantUsers: []string{"u1", "u2"}},
		{name: "devices repeated", devices: []string{"d2", "d1", "d2", "d2"}, wantDevices: []string{"d2", "d1"}},
		{name: "users and devices", users: []string{"u1", "u1"}, devices: []string{"d1"}, err: "give --user or --device, not both"},
		{name: "501 devices", devices: many, err: "501 distinct --device ids are more than one request takes (500)"},
		{name: "500 distinct of 501", devices: append(slices.Clone(many[:500]), many[0]), wantDevices: many[:500]},
	} {
		t.Run(c.name, func(t *testing.T) {
			users, devices, err := testTargets(c.users, c.devices)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || !slices.Equal(users, c.wantUsers) || !slices.Equal(devices, c.wantDevices) {
				t.Fatalf("%v %v %v, want %v %v", users, devices, err, c.wantUsers, c.wantDevices)
			}
		})
	}
}
