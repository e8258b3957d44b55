// Package operation runs every pushform operation without a command line:
// Open loads the configuration and locks the state, and Run.Plan,
// Run.Apply and Run.TestSend do the rest; the operations on the state
// alone (StateList, StateShow, StateRemove, StateMove, StatePrune,
// StatePull, StatePush, StateRepair, History, ForceUnlock) open its
// backend from the configuration's backend block and lock it when they
// write. Each takes Options (and its own inputs) and returns its results
// as data; the caller (package command, a test, another front end)
// chooses the views, the confirmation and what the results mean as exit
// codes. It is Terraform's local backend operations, or gh's run(opts): an
// Options struct and a function per operation.
//
// The configuration is evaluated in two passes, and must be: Open loads
// and validates all of it before the recipients list is fetched (the
// service block says where, nothing is sent before the whole
// configuration validates, and whether a list is needed at all depends on
// the messages), and only then can the expressions that read the list
// (data.recipients.NAME.user_ids in for expressions, slices, conditions,
// locals) be evaluated. The second pass (config.Loader.Resolve, from the
// same Loader: no file is read or parsed again) evaluates only the blocks
// that read the list; a bare data.recipients.NAME.user_ids is not
// evaluated again but given the fetched slice itself, which is what lets
// apply stream (Run.Stream).
package operation
