// Package local is the file state backend: the state in one file beside
// the configuration (pushform.state), written atomically with the previous
// copy kept as a backup, a journal (pushform.state.journal) that every
// request's intent and outcome reach before the snapshot does, and an OS
// lock (pushform.state.lock) that keeps two runs apart and dies with its
// process.
package local
