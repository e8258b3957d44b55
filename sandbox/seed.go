package sandbox

import (
	"fmt"
	"os"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// Environments of API keys and devices (spec part 5).
const (
	EnvTest       = "test"
	EnvProduction = "production"
)

// MaxRangeCount bounds the count of one user_range block, and
// MaxSeedDevices the devices of a whole seed: each device costs about 16
// bytes at rest.
const (
	MaxRangeCount  = 10_000_000
	MaxSeedDevices = 50_000_000
)

// Seed is the population of a sandbox: API keys, users with their devices,
// devices without a user, topics and synthetic user ranges. ParseSeed
// checks it; New trusts it and ignores whatever a hand-built Seed gets
// wrong (a later duplicate, an unknown topic device).
type Seed struct {
	APIKeys    []APIKey
	Users      []User
	Devices    []Device // devices with no signed-in user
	Topics     []Topic
	UserRanges []UserRange
}

// APIKey is an api_key block: the key and its environment.
type APIKey struct {
	Key         string
	Environment string // EnvTest or EnvProduction (the default: spec 5.4)
	DeclRange   hcl.Range
}

// User is a user block: a user id and the devices signed in with it.
type User struct {
	ID        string
	Devices   []Device
	DeclRange hcl.Range
}

// Device is a device block. The three flags default to true.
type Device struct {
	ID           string
	Environment  string // which app the device runs: EnvTest or EnvProduction
	PushToken    bool   // false: app uninstalled or notifications off
	Permission   bool   // the user granted the notification permission
	Online       bool   // offline devices hold the newest notification per tag
	ShellVersion string
	Fail         string    // non-empty: every delivery to the device fails with it
	LastSeen     time.Time // zero when unknown
	DeclRange    hcl.Range
}

// Topic is a topic block: a name and its subscribed device ids.
type Topic struct {
	Name      string
	Devices   []string
	DeclRange hcl.Range

	deviceRanges []hcl.Range // where each of Devices is written, when parsed
}

// UserRange is a user_range block: Count users whose ids are UserFormat
// formatted with 0..Count-1, each with one device whose id is DeviceFormat
// formatted with the same index. Nothing per user is materialised: ids are
// formatted and parsed on demand.
type UserRange struct {
	UserFormat   string // the label, e.g. "u%07d"
	DeviceFormat string // e.g. "d%07d"
	Count        int
	Environment  string
	PushToken    bool
	Permission   bool
	Online       bool
	ShellVersion string
	Fail         string
	LastSeen     time.Time
	DeclRange    hcl.Range
}

var seedSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "api_key", LabelNames: []string{"key"}},
		{Type: "user", LabelNames: []string{"id"}},
		{Type: "device", LabelNames: []string{"id"}},
		{Type: "topic", LabelNames: []string{"name"}},
		{Type: "user_range", LabelNames: []string{"format"}},
	},
}

var apiKeySchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "environment"}},
}

var userSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{{Type: "device", LabelNames: []string{"id"}}},
}

var deviceAttrs = []hcl.AttributeSchema{
	{Name: "environment", Required: true},
	{Name: "push_token"},
	{Name: "permission"},
	{Name: "online"},
	{Name: "shell_version"},
	{Name: "fail"},
	{Name: "last_seen"},
}

var deviceSchema = &hcl.BodySchema{Attributes: deviceAttrs}

var topicSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "devices", Required: true}},
}

var userRangeSchema = &hcl.BodySchema{
	Attributes: append([]hcl.AttributeSchema{
		{Name: "count", Required: true},
		{Name: "device", Required: true},
	}, deviceAttrs...),
}

// LoadSeedFile reads and parses the seed file at path.
func LoadSeedFile(path string) (*Seed, hcl.Diagnostics) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Cannot read sandbox seed file",
			Detail:   err.Error(),
		}}
	}
	return ParseSeed(path, src)
}

// ParseSeed parses a seed file's source. Every problem is reported, each
// with the file and line it comes from; the Seed is nil when there is any
// error.
func ParseSeed(filename string, src []byte) (*Seed, hcl.Diagnostics) {
	file, diags := hclsyntax.ParseConfig(src, filename, hcl.Pos{Line: 1, Column: 1})
	if diags.HasErrors() {
		return nil, diags
	}
	seed, d := DecodeSeed(file.Body)
	return seed, append(diags, d...)
}

// DecodeSeed decodes a body of seed blocks (a seed file's, or the inline
// sandbox block of a pushform test file), as ParseSeed does.
func DecodeSeed(body hcl.Body) (*Seed, hcl.Diagnostics) {
	content, diags := body.Content(seedSchema)
	p := &seedParser{seed: &Seed{}}
	for _, b := range content.Blocks {
		switch b.Type {
		case "api_key":
			p.apiKey(b)
		case "user":
			p.user(b)
		case "device":
			if dev, ok := p.device(b); ok {
				p.seed.Devices = append(p.seed.Devices, dev)
			}
		case "topic":
			p.topic(b)
		case "user_range":
			p.userRange(b)
		}
	}
	p.checkIDs()
	diags = append(diags, p.diags...)
	if diags.HasErrors() {
		return nil, diags
	}
	return p.seed, diags
}

type seedParser struct {
	seed  *Seed
	diags hcl.Diagnostics
}

func (p *seedParser) errorf(subject hcl.Range, summary, format string, args ...any) {
	p.diags = append(p.diags, &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   fmt.Sprintf(format, args...),
		Subject:  subject.Ptr(),
	})
}

func (p *seedParser) label(b *hcl.Block, what string) (string, bool) {
	l := b.Labels[0]
	if l == "" {
		p.errorf(b.LabelRanges[0], "Empty "+what, "The %s block needs a non-empty label.", b.Type)
		return "", false
	}
	return l, true
}

// attr evaluates a literal attribute and converts it to ty.
func (p *seedParser) attr(a *hcl.Attribute, ty cty.Type) (cty.Value, bool) {
	v, d := a.Expr.Value(nil)
	p.diags = append(p.diags, d...)
	if d.HasErrors() {
		return cty.NilVal, false
	}
	if v.IsNull() {
		p.errorf(a.Expr.Range(), "Invalid value", "%s must not be null.", a.Name)
		return cty.NilVal, false
	}
	cv, err := convert.Convert(v, ty)
	if err != nil {
		p.errorf(a.Expr.Range(), "Invalid value", "%s must be a %s: %s.", a.Name, ty.FriendlyName(), err)
		return cty.NilVal, false
	}
	return cv, true
}

func (p *seedParser) str(a *hcl.Attribute) (string, bool) {
	v, ok := p.attr(a, cty.String)
	if !ok {
		return "", false
	}
	return v.AsString(), true
}

func (p *seedParser) boolean(a *hcl.Attribute) (bool, bool) {
	v, ok := p.attr(a, cty.Bool)
	if !ok {
		return false, false
	}
	return v.True(), true
}

func (p *seedParser) environment(a *hcl.Attribute) (string, bool) {
	s, ok := p.str(a)
	if !ok {
		return "", false
	}
	if s != EnvTest && s != EnvProduction {
		p.errorf(a.Expr.Range(), "Invalid environment",
			"environment must be %q or %q, not %q.", EnvTest, EnvProduction, s)
		return "", false
	}
	return s, true
}

func (p *seedParser) apiKey(b *hcl.Block) {
	key, ok := p.label(b, "API key")
	content, d := b.Body.Content(apiKeySchema)
	p.diags = append(p.diags, d...)
	k := APIKey{Key: key, Environment: EnvProduction, DeclRange: b.DefRange}
	if a, found := content.Attributes["environment"]; found {
		k.Environment, _ = p.environment(a)
	}
	if ok {
		p.seed.APIKeys = append(p.seed.APIKeys, k)
	}
}

func (p *seedParser) user(b *hcl.Block) {
	id, ok := p.label(b, "user id")
	content, d := b.Body.Content(userSchema)
	p.diags = append(p.diags, d...)
	u := User{ID: id, DeclRange: b.DefRange}
	for _, db := range content.Blocks {
		if dev, devOK := p.device(db); devOK {
			u.Devices = append(u.Devices, dev)
		}
	}
	if ok {
		p.seed.Users = append(p.seed.Users, u)
	}
}

// deviceFields decodes the attributes a device block and a user_range block
// share into dev.
func (p *seedParser) deviceFields(attrs hcl.Attributes, dev *Device) {
	dev.PushToken, dev.Permission, dev.Online = true, true, true
	if a, found := attrs["environment"]; found {
		dev.Environment, _ = p.environment(a)
	}
	for _, f := range []struct {
		name string
		dst  *bool
	}{{"push_token", &dev.PushToken}, {"permission", &dev.Permission}, {"online", &dev.Online}} {
		if a, found := attrs[f.name]; found {
			*f.dst, _ = p.boolean(a)
		}
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"shell_version", &dev.ShellVersion}, {"fail", &dev.Fail}} {
		if a, found := attrs[f.name]; found {
			*f.dst, _ = p.str(a)
		}
	}
	if a, found := attrs["last_seen"]; found {
		if s, ok := p.str(a); ok {
			t, err := time.Parse(time.RFC3339, s)
			if err != nil {
				p.errorf(a.Expr.Range(), "Invalid last_seen",
					"last_seen must be an RFC 3339 time such as \"2026-11-01T10:00:00Z\": %s.", err)
			}
			dev.LastSeen = t
		}
	}
}

func (p *seedParser) device(b *hcl.Block) (Device, bool) {
	id, ok := p.label(b, "device id")
	content, d := b.Body.Content(deviceSchema)
	p.diags = append(p.diags, d...)
	dev := Device{ID: id, DeclRange: b.DefRange}
	p.deviceFields(content.Attributes, &dev)
	// A device with bad attributes is kept (its errors are reported), so
	// topics naming it do not report it unknown as well.
	return dev, ok
}

func (p *seedParser) topic(b *hcl.Block) {
	name, ok := p.label(b, "topic name")
	content, d := b.Body.Content(topicSchema)
	p.diags = append(p.diags, d...)
	if !ok {
		return
	}
	t := Topic{Name: name, DeclRange: b.DefRange}
	a, found := content.Attributes["devices"]
	if !found {
		p.seed.Topics = append(p.seed.Topics, t)
		return
	}
	v, vOK := p.attr(a, cty.List(cty.String))
	if !vOK {
		p.seed.Topics = append(p.seed.Topics, t)
		return
	}
	var elems []hclsyntax.Expression
	if tuple, isTuple := a.Expr.(*hclsyntax.TupleConsExpr); isTuple {
		elems = tuple.Exprs
	}
	for i, e := range v.AsValueSlice() {
		rng := a.Expr.Range()
		if len(elems) == v.LengthInt() {
			rng = elems[i].Range()
		}
		if e.IsNull() {
			p.errorf(rng, "Invalid value", "devices must not contain null.")
			return
		}
		t.Devices = append(t.Devices, e.AsString())
		t.deviceRanges = append(t.deviceRanges, rng)
	}
	p.seed.Topics = append(p.seed.Topics, t)
}

func (p *seedParser) userRange(b *hcl.Block) {
	format := b.Labels[0]
	ok := true
	if _, err := parseIDFormat(format); err != nil {
		p.errorf(b.LabelRanges[0], "Invalid user_range format", "The label %q %s.", format, err)
		ok = false
	}
	content, d := b.Body.Content(userRangeSchema)
	p.diags = append(p.diags, d...)
	var dev Device
	p.deviceFields(content.Attributes, &dev)
	r := UserRange{
		UserFormat: format, Environment: dev.Environment,
		PushToken: dev.PushToken, Permission: dev.Permission, Online: dev.Online,
		ShellVersion: dev.ShellVersion, Fail: dev.Fail, LastSeen: dev.LastSeen,
		DeclRange: b.DefRange,
	}
	if a, found := content.Attributes["count"]; found {
		v, vOK := p.attr(a, cty.Number)
		if vOK {
			bf := v.AsBigFloat()
			n, acc := bf.Int64()
			if !bf.IsInt() || acc != 0 || n < 0 || n > MaxRangeCount {
				p.errorf(a.Expr.Range(), "Invalid count",
					"count must be a whole number from 0 to %d.", MaxRangeCount)
				n = 0
			}
			r.Count = int(n)
		}
	}
	if a, found := content.Attributes["device"]; found {
		s, sOK := p.str(a)
		if sOK {
			if _, err := parseIDFormat(s); err != nil {
				p.errorf(a.Expr.Range(), "Invalid device format", "The device format %q %s.", s, err)
				sOK = false
			}
		}
		r.DeviceFormat = s
		ok = ok && sOK
	} else {
		ok = false // reported as missing
	}
	if ok {
		p.seed.UserRanges = append(p.seed.UserRanges, r)
	}
}

// checkIDs reports duplicated user ids, device ids and topic names (ranges
// included), topics naming unknown devices, and an oversized population.
func (p *seedParser) checkIDs() {
	s := p.seed
	ranges := make([]rangeFormats, 0, len(s.UserRanges))
	total := 0
	for _, r := range s.UserRanges {
		uf, _ := parseIDFormat(r.UserFormat)
		df, _ := parseIDFormat(r.DeviceFormat)
		total += r.Count
		for _, prev := range ranges {
			if id, clash := formatsOverlap(prev.user, prev.count, uf, r.Count); clash {
				p.errorf(r.DeclRange, "Duplicated user id",
					"This user_range and the one at %s both give the user id %q.", prev.decl, id)
			}
			if id, clash := formatsOverlap(prev.device, prev.count, df, r.Count); clash {
				p.errorf(r.DeclRange, "Duplicated device id",
					"This user_range and the one at %s both give the device id %q.", prev.decl, id)
			}
		}
		ranges = append(ranges, rangeFormats{uf, df, r.Count, r.DeclRange})
	}
	inRange := func(id string, device bool) (rangeFormats, bool) {
		for _, r := range ranges {
			f := r.user
			if device {
				f = r.device
			}
			if i, ok := f.parse(id); ok && i < r.count {
				return r, true
			}
		}
		return rangeFormats{}, false
	}

	users := map[string]hcl.Range{}
	devices := map[string]hcl.Range{}
	addDevice := func(d Device) {
		total++
		if first, dup := devices[d.ID]; dup {
			p.errorf(d.DeclRange, "Duplicated device id",
				"The device id %q is already used at %s; device ids are unique across the seed.", d.ID, first)
			return
		}
		if r, clash := inRange(d.ID, true); clash {
			p.errorf(d.DeclRange, "Duplicated device id",
				"The device id %q is also given by the user_range at %s.", d.ID, r.decl)
		}
		devices[d.ID] = d.DeclRange
	}
	for _, u := range s.Users {
		if first, dup := users[u.ID]; dup {
			p.errorf(u.DeclRange, "Duplicated user id", "The user %q is already declared at %s.", u.ID, first)
		} else if r, clash := inRange(u.ID, false); clash {
			p.errorf(u.DeclRange, "Duplicated user id",
				"The user id %q is also given by the user_range at %s.", u.ID, r.decl)
		}
		users[u.ID] = u.DeclRange
		for _, d := range u.Devices {
			addDevice(d)
		}
	}
	for _, d := range s.Devices {
		addDevice(d)
	}
	topics := map[string]hcl.Range{}
	for _, t := range s.Topics {
		if first, dup := topics[t.Name]; dup {
			p.errorf(t.DeclRange, "Duplicated topic", "The topic %q is already declared at %s.", t.Name, first)
		}
		topics[t.Name] = t.DeclRange
		for i, id := range t.Devices {
			if _, ok := devices[id]; ok {
				continue
			}
			if _, ok := inRange(id, true); ok {
				continue
			}
			subject := t.DeclRange
			if i < len(t.deviceRanges) {
				subject = t.deviceRanges[i]
			}
			p.errorf(subject, "Unknown device in topic",
				"The topic %q lists the device %q, which no device block or user_range declares.", t.Name, id)
		}
	}
	if total > MaxSeedDevices {
		p.errorf(hcl.Range{}, "Seed too large",
			"The seed declares %d devices; at most %d are supported.", total, MaxSeedDevices)
	}
	keys := map[string]hcl.Range{}
	for _, k := range s.APIKeys {
		if first, dup := keys[k.Key]; dup {
			p.errorf(k.DeclRange, "Duplicated API key", "This API key is already declared at %s.", first)
		}
		keys[k.Key] = k.DeclRange
	}
}

type rangeFormats struct {
	user, device idFormat
	count        int
	decl         hcl.Range
}
