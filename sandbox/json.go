package sandbox

import (
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// appendJSONString appends s as a JSON string, quoted by jsontext (the
// client quotes with the same library): ", \ and control characters
// escaped, nothing else, and invalid UTF-8 as U+FFFD.
func appendJSONString[T string | []byte](b []byte, s T) []byte {
	b, _ = jsontext.AppendQuote(b, s) // the error only reports what became U+FFFD
	return b
}

// appendTime appends unix nanoseconds as a JSON RFC 3339 string in UTC.
func appendTime(b []byte, nanos int64) []byte {
	b = append(b, '"')
	b = time.Unix(0, nanos).UTC().AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}
