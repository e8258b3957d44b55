package planner

import "pushform/message"

// addressed is what the request being packed addresses, so that no
// target joins a request that already addresses it through another
// change: a result entry echoes only its target (userId, deviceId,
// topics) and the spec promises no order, so the service's answers for
// the two could not be told apart. It costs nothing while the request
// holds one change of each target kind (the usual large campaign); the
// set of targets is made only once a second change of a kind joins.
type addressed struct {
	parts []addressedPart
	// owner is, per target kind, the one change of that kind in the
	// request, or multiple once there are more (then sets holds them).
	owner map[message.TargetKind]int
	sets  map[message.TargetKind]map[string]int
}

type addressedPart struct {
	change  int
	kind    message.TargetKind
	targets []string
}

const multiple = -1

// reset empties a for the next request.
func (a *addressed) reset() {
	clear(a.parts)
	a.parts = a.parts[:0]
	clear(a.owner)
	clear(a.sets)
}

// fit returns how many of targets, from the start, change ci (of kind k)
// may add to the request: up to the first that another change in it
// addresses.
func (a *addressed) fit(ci int, k message.TargetKind, targets []string) int {
	o, ok := a.owner[k]
	if !ok || o == ci {
		return len(targets)
	}
	set := a.set(k)
	for j, t := range targets {
		if c, ok := set[t]; ok && c != ci {
			return j
		}
	}
	return len(targets)
}

// add records targets of change ci (of kind k) as addressed by the
// request.
func (a *addressed) add(ci int, k message.TargetKind, targets []string) {
	if len(targets) == 0 {
		return
	}
	if a.owner == nil {
		a.owner = map[message.TargetKind]int{}
	}
	a.parts = append(a.parts, addressedPart{ci, k, targets})
	switch o, ok := a.owner[k]; {
	case !ok:
		a.owner[k] = ci
	case o != ci:
		a.owner[k] = multiple
	}
	if set := a.sets[k]; set != nil {
		for _, t := range targets {
			if _, ok := set[t]; !ok {
				set[t] = ci
			}
		}
	}
}

// set returns the targets of kind k in the request, by the change that
// first addressed each, making it on first need.
func (a *addressed) set(k message.TargetKind) map[string]int {
	if set := a.sets[k]; set != nil {
		return set
	}
	if a.sets == nil {
		a.sets = map[message.TargetKind]map[string]int{}
	}
	set := map[string]int{}
	for _, p := range a.parts {
		if p.kind != k {
			continue
		}
		for _, t := range p.targets {
			if _, ok := set[t]; !ok {
				set[t] = p.change
			}
		}
	}
	a.sets[k] = set
	return set
}
