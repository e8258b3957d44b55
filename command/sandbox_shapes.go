package command

import (
	"fmt"

	"github.com/spf13/pflag"

	"pushform/sandbox"
)

// bindSpecShapes adds the sandbox flags of the issue 38 shapes to fs, into
// o; the function returned checks them once parsed.
func bindSpecShapes(fs *pflag.FlagSet, o *sandbox.SpecShapes) func() error {
	fs.IntVar(&o.MaxBodyBytes, "max-body-bytes", 0, "refuse a send request whose body is over `N` bytes (0: only the 8 MiB bound), as --too-large-answer says")
	fs.StringVar(&o.TooLargeAnswer, "too-large-answer", "413", "how a body over --max-body-bytes is refused: `413` (Payload Too Large) or 400 (a request-level issue saying so)")
	faults := fs.String("send-fault", "", "answer the first send requests, in order, with these statuses and Retry-After: 1, processing nothing: `LIST` of STATUS[xTIMES], STATUS 429 or 503 (e.g. 429x5,503x2)")
	fs.StringVar(&o.DeviceCountFormat, "device-count-format", sandbox.CountNumber, "how deviceCount is written: `number`, or words (\"2 devices\": a count no client reads)")
	return func() error {
		switch {
		case o.MaxBodyBytes < 0:
			return fmt.Errorf("--max-body-bytes must not be negative, not %d", o.MaxBodyBytes)
		case o.TooLargeAnswer != "413" && o.TooLargeAnswer != "400":
			return fmt.Errorf("--too-large-answer must be 413 or 400, not %q", o.TooLargeAnswer)
		case o.DeviceCountFormat != sandbox.CountNumber && o.DeviceCountFormat != sandbox.CountWords:
			return fmt.Errorf("--device-count-format must be number or words, not %q", o.DeviceCountFormat)
		}
		if *faults != "" {
			f, err := sandbox.ParseSendFaults(*faults)
			if err != nil {
				return fmt.Errorf("--send-fault: %w", err)
			}
			o.SendFaults = f
		}
		return nil
	}
}
