package sandbox

import (
	"time"

	"pushform/internal/jsonstr"
)

// appendJSONString appends s as a JSON string, quoted by jsonstr (as
// jsontext quotes): ", \ and control characters escaped, nothing else,
// and invalid UTF-8 as U+FFFD.
func appendJSONString[T string | []byte](b []byte, s T) []byte {
	return jsonstr.AppendQuote(b, s)
}

// appendTime appends unix nanoseconds as a JSON RFC 3339 string in UTC.
func appendTime(b []byte, nanos int64) []byte {
	b = append(b, '"')
	b = time.Unix(0, nanos).UTC().AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}
