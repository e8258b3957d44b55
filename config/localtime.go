package config

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"pushform/config/tzdb"
)

// Local-time delivery: time_zones says where each target lives,
// deliver_at_local when, in its own zone, it gets a notification, and
// quiet_hours when it gets none. The service knows no zones (spec 2.3
// lists ids only): they come from the brand's own data.

var timeZonesSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "by_user"},
		{Name: "by_device"},
		{Name: "default"},
	},
}

var quietHoursSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "from", Required: true},
		{Name: "to", Required: true},
	},
}

// TimeZones maps targets to IANA time zones. Topics, and users or devices
// not listed, are in the default zone, Zones[0].
type TimeZones struct {
	// Zones are the distinct zones, the default first ("UTC" unless set).
	Zones []*time.Location
	// Users and Devices are by_user and by_device.
	Users, Devices ZoneList
	Pos            Pos
}

// ZoneList maps ids to zones: IDs sorted and distinct, and Zone[i] the
// index in TimeZones.Zones of the zone of IDs[i]. Sorted lists let the
// planner walk a sorted target list and its zones side by side, which
// costs far less than a million hash lookups.
type ZoneList struct {
	IDs  []string
	Zone []uint16
}

// Find returns the zone index of id, and whether it is listed.
func (l *ZoneList) Find(id string) (int, bool) {
	i, ok := slices.BinarySearch(l.IDs, id)
	if !ok {
		return 0, false
	}
	return int(l.Zone[i]), true
}

// Default is the zone of targets not listed.
func (z *TimeZones) Default() *time.Location { return z.Zones[0] }

// List returns the zone list of targets of kind k; empty for topics.
func (z *TimeZones) List(k TargetKind) *ZoneList {
	switch k {
	case TargetUsers:
		return &z.Users
	case TargetDevices:
		return &z.Devices
	}
	return &ZoneList{}
}

// NewTimeZones builds the zones of def (nil: UTC) and the two maps.
func NewTimeZones(def *time.Location, byUser, byDevice map[string]*time.Location) *TimeZones {
	if def == nil {
		def = time.UTC
	}
	zb := newZoneBuilder(def)
	z := &TimeZones{}
	z.Users, z.Devices = zb.list(byUser), zb.list(byDevice)
	z.Zones = zb.zones
	return z
}

// zoneBuilder numbers zones as lists are built.
type zoneBuilder struct {
	zones []*time.Location
	index map[*time.Location]uint16
}

func newZoneBuilder(def *time.Location) *zoneBuilder {
	return &zoneBuilder{zones: []*time.Location{def}, index: map[*time.Location]uint16{def: 0}}
}

func (zb *zoneBuilder) of(loc *time.Location) uint16 {
	i, ok := zb.index[loc]
	if !ok {
		i = uint16(len(zb.zones))
		zb.zones = append(zb.zones, loc)
		zb.index[loc] = i
	}
	return i
}

func (zb *zoneBuilder) list(m map[string]*time.Location) ZoneList {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	l := ZoneList{IDs: ids, Zone: make([]uint16, len(ids))}
	for i, id := range ids {
		l.Zone[i] = zb.of(m[id])
	}
	return l
}

// ClockTime is a wall-clock time of day, in minutes after midnight.
type ClockTime int

// Hour and Minute split the time of day.
func (c ClockTime) Hour() int   { return int(c) / 60 }
func (c ClockTime) Minute() int { return int(c) % 60 }

// String formats it as written: "09:00".
func (c ClockTime) String() string { return fmt.Sprintf("%02d:%02d", c.Hour(), c.Minute()) }

// LocalTime is deliver_at_local: a wall-clock time, on Year-Month-Day
// when Dated.
type LocalTime struct {
	Dated bool
	Year  int
	Month time.Month
	Day   int
	Clock ClockTime
	Pos   Pos
}

// String formats it as written: "09:00" or "2026-12-01 09:00".
func (l LocalTime) String() string {
	if !l.Dated {
		return l.Clock.String()
	}
	return fmt.Sprintf("%04d-%02d-%02d %s", l.Year, int(l.Month), l.Day, l.Clock)
}

// QuietHours is a quiet_hours block: no notification reaches a target
// while its local time is from From up to To (the window may span
// midnight: 21:00 to 08:00).
type QuietHours struct {
	From, To ClockTime
	Pos      Pos
}

// Contains reports whether the time of day c is inside the window.
func (q QuietHours) Contains(c ClockTime) bool {
	if q.From <= q.To {
		return c >= q.From && c < q.To
	}
	return c >= q.From || c < q.To
}

// parseClock parses "HH:MM" (24-hour).
func parseClock(s string) (ClockTime, error) {
	t, err := time.Parse("15:04", s)
	if err != nil || len(s) != 5 {
		return 0, fmt.Errorf("a time of day is written HH:MM, 24-hour, such as \"09:00\" or \"21:30\"")
	}
	return ClockTime(t.Hour()*60 + t.Minute()), nil
}

// parseLocalTime parses "HH:MM" or "YYYY-MM-DD HH:MM".
func parseLocalTime(s string) (LocalTime, error) {
	if len(s) == 5 {
		c, err := parseClock(s)
		return LocalTime{Clock: c}, err
	}
	t, err := time.Parse("2006-01-02 15:04", s)
	l := LocalTime{Dated: true, Year: t.Year(), Month: t.Month(), Day: t.Day(), Clock: ClockTime(t.Hour()*60 + t.Minute())}
	if err != nil || l.String() != s { // time.Parse takes "9:00" for "09:00": be as strict as the message
		return LocalTime{}, fmt.Errorf("deliver_at_local is a wall-clock time, \"09:00\", or a date and time, \"2026-12-01 09:00\", in each target's own zone")
	}
	return l, nil
}

// zoneCache loads each zone name once per configuration.
type zoneCache map[string]*time.Location

// load returns the zone named name, from the zone database embedded in
// the binary (tzdb): never the machine's, whatever ZONEINFO says, so a
// plan is the same everywhere. "Local", "localtime", "posixrules" and
// "Factory" are no place, and refused.
func (zc zoneCache) load(name string) (*time.Location, error) {
	if loc, ok := zc[name]; ok {
		return loc, nil
	}
	loc, err := tzdb.Load(name)
	if err != nil {
		return nil, err
	}
	zc[name] = loc
	return loc, nil
}

// evalTimeZones evaluates a time_zones block; nil when unusable.
func evalTimeZones(b *hcl.Block, ctx *hcl.EvalContext) (*TimeZones, hcl.Diagnostics) {
	content, diags := b.Body.Content(timeZonesSchema)
	zc := zoneCache{}
	def := time.UTC
	if a, ok := content.Attributes["default"]; ok {
		name, set, d := evalKnownString(a, ctx)
		diags = append(diags, d...)
		if set {
			loc, err := zc.load(name)
			if err != nil {
				diags = append(diags, errDiag("Unknown time zone",
					fmt.Sprintf("default must be an IANA time zone name such as \"America/New_York\" or \"UTC\"; got %s.", quoteValue(name)), a.Expr.Range().Ptr()))
			} else {
				def = loc
			}
		}
	}
	zb := newZoneBuilder(def)
	z := &TimeZones{Pos: posOf(b.DefRange)}
	for _, f := range []struct {
		name string
		dst  *ZoneList
	}{{"by_user", &z.Users}, {"by_device", &z.Devices}} {
		a, ok := content.Attributes[f.name]
		if !ok {
			continue
		}
		var d hcl.Diagnostics
		*f.dst, d = evalZoneMap(a, ctx, zc, zb)
		diags = append(diags, d...)
	}
	z.Zones = zb.zones
	return z, diags
}

// evalZoneMap evaluates a map of target id to zone name. Every unknown
// zone name is a diagnostic at the attribute, naming a target that has it.
func evalZoneMap(a *hcl.Attribute, ctx *hcl.EvalContext, zc zoneCache, zb *zoneBuilder) (ZoneList, hcl.Diagnostics) {
	v, set, diags := evalKnown(a, ctx, cty.Map(cty.String))
	if !set {
		return ZoneList{}, diags
	}
	out := ZoneList{IDs: make([]string, 0, v.LengthInt()), Zone: make([]uint16, 0, v.LengthInt())}
	bad := map[string][]string{} // zone name -> targets
	for it := v.ElementIterator(); it.Next(); {
		k, ev := it.Element()
		if ev.IsNull() {
			continue
		}
		name := ev.AsString()
		loc, err := zc.load(name)
		if err != nil {
			if ids := bad[name]; len(ids) < 3 {
				bad[name] = append(ids, k.AsString())
			}
			continue
		}
		// cty iterates a map in sort.Strings order of its keys (its
		// ElementIterator sorts them): the list comes out sorted, as
		// the planner needs.
		out.IDs = append(out.IDs, k.AsString())
		out.Zone = append(out.Zone, zb.of(loc))
	}
	names := make([]string, 0, len(bad))
	for n := range bad {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		diags = append(diags, errDiag("Unknown time zone",
			fmt.Sprintf("%s maps %s to %s, which is not an IANA time zone name (such as \"Europe/Berlin\" or \"UTC\").",
				a.Name, strings.Join(quoteAll(bad[n]), ", "), quoteValue(n)), a.Expr.Range().Ptr()))
	}
	return out, diags
}

func quoteAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = quoteValue(x)
	}
	return out
}

// evalQuietHours evaluates a quiet_hours block; nil when unusable.
func evalQuietHours(b *hcl.Block, ctx *hcl.EvalContext) (*QuietHours, hcl.Diagnostics) {
	content, diags := b.Body.Content(quietHoursSchema)
	q := &QuietHours{Pos: posOf(b.DefRange)}
	ok := !diags.HasErrors()
	for _, f := range []struct {
		name string
		dst  *ClockTime
	}{{"from", &q.From}, {"to", &q.To}} {
		name := f.name
		a, has := content.Attributes[name]
		if !has {
			continue
		}
		s, set, d := evalKnownString(a, ctx)
		diags = append(diags, d...)
		if !set {
			ok = false
			continue
		}
		c, err := parseClock(s)
		if err != nil {
			diags = append(diags, errDiag("Invalid "+name, fmt.Sprintf("quiet_hours %s: %s; got %s.", name, err, quoteValue(s)), a.Expr.Range().Ptr()))
			ok = false
			continue
		}
		*f.dst = c
	}
	if ok && q.From == q.To {
		diags = append(diags, errDiag("Empty quiet_hours",
			"quiet_hours from and to are the same time: the window would be empty (or the whole day). Remove the block for no quiet hours.", b.DefRange.Ptr()))
		ok = false
	}
	if !ok {
		return nil, diags
	}
	return q, diags
}

// evalDeliverAtLocal evaluates a deliver_at_local attribute.
func evalDeliverAtLocal(a *hcl.Attribute, ctx *hcl.EvalContext) (*LocalTime, hcl.Diagnostics) {
	s, set, diags := evalKnownString(a, ctx)
	if !set {
		return nil, diags
	}
	l, err := parseLocalTime(s)
	if err != nil {
		return nil, append(diags, errDiag("Invalid deliver_at_local", fmt.Sprintf("%s; got %s.", err, quoteValue(s)), a.Expr.Range().Ptr()))
	}
	l.Pos = posOf(a.NameRange)
	return &l, diags
}

// localBlocks are the time_zones and quiet_hours blocks of the top level
// or of a campaign: at most one of each.
type localBlocks struct {
	timeZones, quietHours *hcl.Block
}

// add takes b when it is one of them, reporting a second one; where is
// "A configuration" or "A campaign".
func (lb *localBlocks) add(b *hcl.Block, where string) (bool, hcl.Diagnostics) {
	var slot **hcl.Block
	switch b.Type {
	case "time_zones":
		slot = &lb.timeZones
	case "quiet_hours":
		slot = &lb.quietHours
	default:
		return false, nil
	}
	if *slot != nil {
		return true, hcl.Diagnostics{duplicateSingle(where, b.Type+" block", *slot, b)}
	}
	*slot = b
	return true, nil
}

// eval evaluates the blocks present.
func (lb *localBlocks) eval(ctx *hcl.EvalContext) (*TimeZones, *QuietHours, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	var z *TimeZones
	var q *QuietHours
	if lb.timeZones != nil {
		var d hcl.Diagnostics
		z, d = evalTimeZones(lb.timeZones, ctx)
		diags = append(diags, d...)
	}
	if lb.quietHours != nil {
		var d hcl.Diagnostics
		q, d = evalQuietHours(lb.quietHours, ctx)
		diags = append(diags, d...)
	}
	return z, q, diags
}

// decodeLocalDelivery sets deliver_at_local, ignore_quiet_hours and the
// zones and quiet hours that hold for m: the campaign's, else the top
// level's.
func decodeLocalDelivery(m *Message, attrs hcl.Attributes, ctx *hcl.EvalContext, sc *scope) hcl.Diagnostics {
	var diags hcl.Diagnostics
	c := sc.campaigns[m.Campaign]
	m.TimeZones, m.QuietHours, m.DeliverAtLocal = sc.timeZones, sc.quietHours, c.DeliverAtLocal
	if c.TimeZones != nil {
		m.TimeZones = c.TimeZones
	}
	if c.QuietHours != nil {
		m.QuietHours = c.QuietHours
	}
	if a, ok := attrs["deliver_at_local"]; ok {
		var d hcl.Diagnostics
		m.DeliverAtLocal, d = evalDeliverAtLocal(a, ctx)
		diags = append(diags, d...)
		if m.Kind == KindBadge && m.DeliverAtLocal != nil {
			diags = append(diags, errDiag("Unsupported argument in badge block",
				"A badge update is never held: it corrects a count and goes out at once, so deliver_at_local belongs in a notification block.", a.NameRange.Ptr()))
		}
	}
	v, a, ok, d := present(attrs, "ignore_quiet_hours", ctx, cty.Bool)
	diags = append(diags, d...)
	if ok && v.IsKnown() {
		m.IgnoreQuietHours = v.True()
		if m.Kind == KindBadge {
			diags = append(diags, warnDiag("ignore_quiet_hours in a badge block",
				"Badge updates are never held by quiet_hours; ignore_quiet_hours has no effect here.", a.NameRange.Ptr()))
		}
	}
	if m.Kind == KindBadge {
		m.DeliverAtLocal = nil
	}
	return diags
}
