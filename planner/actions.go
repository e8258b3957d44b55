package planner

// The plan's actions, in one table: what each does to an address and how
// every view shows it. A new action is one constant and one row here (and
// a golden); the views read the row, and their tests fail for an action
// without one.

// Action is what a plan does to one address.
type Action string

// The actions a plan holds; each has a row in actionTable.
const (
	ActionCreate  Action = "create"   // address not in state: send to every target
	ActionSendNew Action = "send-new" // same content, targets added: send to the new ones only
	ActionRetry   Action = "retry"    // failed, unknown, or reachable-again targets
	// ActionRepeat: every target apply sends received this content
	// before, and repeat_after (or --allow-resend) sends it again.
	ActionRepeat  Action = "repeat"
	ActionReplace Action = "replace" // content changed, same tag before and after: devices replace the earlier one
	ActionResend  Action = "resend"  // content changed, no tag or another tag: the earlier one stays
	ActionUpdate  Action = "update"  // badge count changed: the badge converges
	// ActionMoved: a moved block (or state mv) renamed the address and
	// nothing else changed: apply records the move, and sends nothing.
	ActionMoved Action = "moved"
	ActionWait  Action = "wait" // send_after is still in the future
	// ActionQuiet: every target apply would send now is held by
	// quiet_hours; the plan says when the first window ends
	// (Local.QuietOpens).
	ActionQuiet Action = "quiet"
	// ActionExpired: send_before has passed with targets not delivered;
	// they are never sent, retried or replaced.
	ActionExpired Action = "expired"
	// ActionCapped: every target apply would send is held back by a
	// frequency_cap; a later plan sends them once the cap allows.
	ActionCapped Action = "capped"
	// ActionAlreadyDelivered: the ledger shows every target apply would
	// send already received this content (or may have), under this or
	// another address, current or forgotten: nothing is sent, and apply
	// records the address as up to date, pointing at those deliveries.
	ActionAlreadyDelivered Action = "already-delivered"
	// ActionDisabled: enabled = false. Nothing is sent or forgotten; the
	// address keeps its records.
	ActionDisabled Action = "disabled"
	ActionForget   Action = "forget" // gone from config: state only, nothing is sent
	// ActionStage: a rollout holds every target apply would send for a
	// later stage (its wait has not passed) or its failure gate halted it.
	ActionStage Action = "stage"
	// ActionHoldout: the targets of a holdout receive nothing; apply
	// records them (outcome holdout) so the brand can compare.
	ActionHoldout Action = "holdout"
	// ActionUnfilled: the text of every target apply would send could not
	// be filled in (personal.go): they are held, and apply records why.
	ActionUnfilled Action = "unfilled"
	ActionNoOp     Action = "no-op"
)

// Colour is the colour of an action's symbol on a terminal.
type Colour string

// The colours: green reaches targets for the first time, red drops
// records, yellow is everything else.
const (
	Green  Colour = "green"
	Yellow Colour = "yellow"
	Red    Colour = "red"
)

// ActionInfo is one row of the table: an action and how views show it.
// Text in it is written for people; {targets} in Headline and Audience
// stands for the targets the change counts (see Counted).
type ActionInfo struct {
	Action Action
	// Symbol marks the action in human and markdown output.
	Symbol string
	Colour Colour
	// Word counts the action's addresses in the summary line ("2 to
	// create"); "" when the line leaves them out. Always: the line says
	// "0 to create" too.
	Word   string
	Always bool
	// Markdown names the action in the markdown list of addresses.
	Markdown string
	// Sends: apply sends the change's content to its targets, now or once
	// send_after passes; lock-screen previews are shown for it.
	Sends bool
	// Headline follows the address in the human line and the markdown
	// details ("notification.x will be created: 3 users (a, b, c)");
	// "" for the actions whose headline the views compose from more than
	// a count (a tag, a time, a badge count, another address).
	Headline string
	// Audience says who the change reaches, in the markdown list, for an
	// action that sends nothing; "" for the views' own.
	Audience string
	// Counted is the TargetCounts field the headline counts (nil: none),
	// so the change's notes do not count it again. {targets} is the
	// targets apply sends, with their ids, for an action that Sends, and
	// this count otherwise.
	Counted func(*TargetCounts) *int
	// summary is the Summary field counting the action's addresses (nil:
	// none).
	summary func(*Summary) *int
}

// actionTable lists every action, in the order the summary line counts
// them.
var actionTable = []ActionInfo{
	{Action: ActionCreate, Symbol: "+", Colour: Green, Word: "to create", Always: true, Markdown: "create", Sends: true,
		Headline: " will be created: {targets}",
		Counted:  func(t *TargetCounts) *int { return &t.New }, summary: func(s *Summary) *int { return &s.Create }},
	{Action: ActionSendNew, Symbol: "+", Colour: Green, Word: "to send to new targets", Markdown: "send to new targets", Sends: true,
		Counted: func(t *TargetCounts) *int { return &t.New }, summary: func(s *Summary) *int { return &s.SendNew }},
	{Action: ActionRetry, Symbol: "↻", Colour: Yellow, Word: "to retry", Markdown: "retry", Sends: true,
		Counted: func(t *TargetCounts) *int { return &t.Retry }, summary: func(s *Summary) *int { return &s.Retry }},
	{Action: ActionRepeat, Symbol: "↺", Colour: Yellow, Word: "to repeat", Markdown: "repeat", Sends: true,
		Headline: " will be repeated: {targets}",
		Counted:  func(t *TargetCounts) *int { return &t.Repeat }, summary: func(s *Summary) *int { return &s.Repeat }},
	{Action: ActionReplace, Symbol: "~", Colour: Yellow, Word: "to replace", Always: true, Markdown: "replace on devices", Sends: true,
		summary: func(s *Summary) *int { return &s.Replace }},
	{Action: ActionResend, Symbol: "!", Colour: Yellow, Word: "to resend", Markdown: "send again", Sends: true,
		summary: func(s *Summary) *int { return &s.Resend }},
	{Action: ActionUpdate, Symbol: "~", Colour: Yellow, Word: "to update", Markdown: "update badge", Sends: true,
		summary: func(s *Summary) *int { return &s.Update }},
	{Action: ActionMoved, Symbol: "→", Colour: Yellow, Word: "to move", Markdown: "move", Audience: "nothing is sent",
		summary: func(s *Summary) *int { return &s.Moved }},
	{Action: ActionWait, Symbol: "…", Colour: Yellow, Word: "waiting", Markdown: "wait for send_after", Sends: true,
		Counted: func(t *TargetCounts) *int { return &t.Waiting }, summary: func(s *Summary) *int { return &s.Wait }},
	{Action: ActionQuiet, Symbol: "☾", Colour: Yellow, Word: "quiet", Markdown: "held by quiet_hours",
		Headline: " is held by quiet_hours: {targets}, sent once their window ends", Audience: "{targets} after the quiet hours",
		Counted: func(t *TargetCounts) *int { return &t.Quiet }, summary: func(s *Summary) *int { return &s.Quiet }},
	{Action: ActionExpired, Symbol: "⌛", Colour: Yellow, Word: "expired", Markdown: "expired", Audience: "{targets} never sent",
		Counted: func(t *TargetCounts) *int { return &t.Expired }, summary: func(s *Summary) *int { return &s.Expired }},
	{Action: ActionCapped, Symbol: "⊘", Colour: Yellow, Word: "capped", Markdown: "held by frequency_cap",
		Headline: " is held back by frequency_cap: {targets}, sent once the cap allows", Audience: "{targets} held back",
		Counted: func(t *TargetCounts) *int { return &t.Capped }, summary: func(s *Summary) *int { return &s.Capped }},
	{Action: ActionAlreadyDelivered, Symbol: "⊘", Colour: Yellow, Word: "already delivered", Markdown: "already delivered",
		Counted: func(t *TargetCounts) *int { return &t.AlreadyDelivered }, summary: func(s *Summary) *int { return &s.AlreadyDelivered }},
	{Action: ActionDisabled, Symbol: "⏸", Colour: Yellow, Word: "disabled", Markdown: "disabled",
		Headline: " is disabled (enabled = false): nothing is sent or forgotten, its records are kept",
		Audience: "`enabled = false`: nothing is sent or forgotten",
		summary:  func(s *Summary) *int { return &s.Disabled }},
	{Action: ActionForget, Symbol: "-", Colour: Red, Word: "to forget", Always: true, Markdown: "forget",
		Counted: func(t *TargetCounts) *int { return &t.Forget }, summary: func(s *Summary) *int { return &s.Forget }},
	{Action: ActionStage, Symbol: "⏳", Colour: Yellow, Markdown: "held by its rollout",
		Headline: " is held by its rollout: {targets} not sent now", Audience: "{targets} in later rollout stages",
		Counted: func(t *TargetCounts) *int { return &t.Staged }, summary: func(s *Summary) *int { return &s.Staged }},
	{Action: ActionHoldout, Symbol: "∅", Colour: Yellow, Markdown: "holdout"},
	{Action: ActionUnfilled, Symbol: "✗", Colour: Yellow, Word: "held", Markdown: "held: text not filled in",
		Headline: " is held: {targets} whose text could not be filled in", Audience: "{targets} held",
		Counted: func(t *TargetCounts) *int { return &t.Unfilled }, summary: func(s *Summary) *int { return &s.Unfilled }},
	{Action: ActionNoOp, Symbol: " ", Colour: Yellow, Markdown: "nothing to send",
		summary: func(s *Summary) *int { return &s.NoOp }},
}

// actionIndex finds a row by action.
var actionIndex = func() map[Action]int {
	m := make(map[Action]int, len(actionTable))
	for i, r := range actionTable {
		m[r.Action] = i
	}
	return m
}()

// Actions lists every action, in the table's order.
func Actions() []Action {
	out := make([]Action, len(actionTable))
	for i, r := range actionTable {
		out[i] = r.Action
	}
	return out
}

// ActionTable returns the rows of every action, in order (a copy).
func ActionTable() []ActionInfo {
	return append([]ActionInfo(nil), actionTable...)
}

// Info returns the row of a, and whether a is known (a plan file from
// another version may hold an action this one does not).
func Info(a Action) (ActionInfo, bool) {
	i, ok := actionIndex[a]
	if !ok {
		return ActionInfo{Action: a}, false
	}
	return actionTable[i], true
}

// Sends reports whether applying an a change sends its content (now or
// once send_after passes).
func (a Action) Sends() bool {
	r, _ := Info(a)
	return r.Sends
}

// SummaryCount is how many addresses of s the row's action counts, 0 for
// an action the summary does not count.
func (r ActionInfo) SummaryCount(s Summary) int {
	if r.summary == nil {
		return 0
	}
	return *r.summary(&s)
}
