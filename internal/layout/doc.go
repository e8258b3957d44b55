// Package layout holds no code: its tests keep the repository's shape as
// docs/architecture.md describes it, so the rules hold from now on. No
// non-test Go file is over 900 lines and no non-test function over 120
// (generated code aside), and package command, the command line, neither
// imports a state package nor opens a backend itself: operations do.
package layout
