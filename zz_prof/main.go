package main

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"pushform/command"
)

func main() {
	f, _ := os.Create(os.Args[1])
	pprof.StartCPUProfile(f)
	start := time.Now()
	env := command.OSEnv()
	code := command.Run(context.Background(), os.Args[2:], env)
	pprof.StopCPUProfile()
	fmt.Fprintln(os.Stderr, "code", code, time.Since(start))
}
