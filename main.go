// Command pushform is a declarative, Terraform-style campaign runner for the
// Push Notification Service.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"pushform/command"
	"pushform/internal/gctune"
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		// The first signal stops new work and lets the command save what it
		// did; the second exits at once (apply's journal is already durable).
		// Cancel before saying so: once the message is out, no new request
		// starts (the interrupt tests wait for it before letting requests
		// in flight finish).
		<-sigs
		cancel()
		fmt.Fprintln(os.Stderr, "\nInterrupted: stopping once the work in progress is saved. Interrupt again to exit at once.")
		<-sigs
		fmt.Fprintln(os.Stderr, "Interrupted again: exiting now.")
		os.Exit(130)
	}()
	env := command.OSEnv()
	// The process is ours alone: apply may tune the collector for sending.
	env.Sending = func() { gctune.ForSending(os.Getenv) }
	code := command.Run(ctx, os.Args[1:], env)
	cancel()
	os.Exit(code)
}
