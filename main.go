// Command pushform is a declarative, Terraform-style campaign runner for the
// Push Notification Service.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"pushform/command"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := command.Run(ctx, os.Args[1:], command.OSEnv())
	stop()
	os.Exit(code)
}
