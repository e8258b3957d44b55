package operation

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"pushform/config"
	"pushform/planner"
	"pushform/state"
	"pushform/termtext"
	"pushform/views"
)

// RenderOptions are the inputs of Render.
type RenderOptions struct {
	// Address is a notification of the configuration, or one variant of
	// it (ADDR.variant.NAME: that variant's text, whatever the person
	// would be assigned).
	Address string
	// Users (a notification to user_ids) or Devices (to device_ids) are
	// the people to fill the text in for.
	Users, Devices []string
}

// Render fills in, for each person asked about, the text they would
// receive of an address of cfg, exactly as a plan fills it in: the
// variant they get (from the state's ledger, read without locking, else
// by bucket), the translation their locale chooses, and why they are held
// when their text cannot be filled in. Nothing is sent or recorded.
func Render(ctx context.Context, so Options, cfg *config.Config, o RenderOptions) ([]views.Rendered, error) {
	be, err := so.openState(ctx)
	if err != nil {
		return nil, err
	}
	defer be.Close()
	st, err := readCompact(be)
	if err != nil {
		return nil, err
	}
	return render(cfg, st, o)
}

// render is Render over the state st (nil: none).
func render(cfg *config.Config, st *state.State, o RenderOptions) ([]views.Rendered, error) {
	base, variant, isVariant := strings.Cut(o.Address, planner.VariantInfix)
	var m *config.Message
	for _, cm := range cfg.Messages {
		if cm.Address == o.Address || isVariant && cm.Address == base {
			m = cm
		}
	}
	if m == nil || m.Kind != config.KindNotification {
		return nil, fmt.Errorf("render: %s is not a notification of the configuration (give the full address, e.g. campaign.NAME.notification.NAME, or NAME.variant.V for a variant)", termtext.Clean(o.Address))
	}
	kind, ids := m.Targets.Kind, o.Users
	switch {
	case kind == config.TargetTopics:
		return nil, fmt.Errorf("render: %s addresses topics: its text is the same for every subscriber (pushform plan shows it)", termtext.Clean(m.Address))
	case len(o.Users) > 0 && len(o.Devices) > 0:
		return nil, errors.New("render: give --user or --device, not both")
	case kind == config.TargetDevices && len(o.Users) > 0:
		return nil, fmt.Errorf("render: %s addresses device_ids: give --device ID", termtext.Clean(m.Address))
	case kind == config.TargetUsers && len(o.Devices) > 0:
		return nil, fmt.Errorf("render: %s addresses user_ids: give --user ID", termtext.Clean(m.Address))
	case kind == config.TargetDevices:
		ids = o.Devices
	}
	if len(ids) == 0 {
		return nil, errors.New("render: give --user ID (or --device ID) for each person to show")
	}
	ids = distinctIDs(ids)
	parts := map[string]*config.Message{}
	if isVariant {
		var forced *config.Message
		for _, v := range m.Variants {
			if v.Name == variant {
				c := *m
				c.Address, c.Content, c.Template, c.Variants = o.Address, v.Content, v.Template, nil
				forced = &c
			}
		}
		if forced == nil {
			return nil, fmt.Errorf("render: %s has no variant %q", termtext.Clean(base), termtext.Clean(variant))
		}
		for _, id := range ids {
			parts[id] = forced
		}
	} else {
		var err error
		if parts, err = planner.Assign(cfg, st, m, ids); err != nil {
			return nil, err
		}
	}
	out := make([]views.Rendered, 0, len(ids))
	for _, id := range ids {
		r := views.Rendered{Target: id, TargetKind: kind}
		p := parts[id]
		if p == nil {
			r.HeldOut = true
			out = append(out, r)
			continue
		}
		r.Address, r.Content = p.Address, p.Content
		if vb, name, ok := strings.Cut(p.Address, planner.VariantInfix); ok && vb == m.Address {
			r.Variant = name
		}
		if p.Template != nil {
			rr, err := p.Template.Render(id)
			if err != nil {
				return nil, fmt.Errorf("render %s: %w", termtext.Clean(m.Address), err)
			}
			r.Personal, r.Rendering = true, rr
			if rr.Held == "" {
				r.Content = rr.Content
			}
		}
		out = append(out, r)
	}
	return out, nil
}
