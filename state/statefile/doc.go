// Package statefile holds every byte format of the state, for the file
// backend and PostgreSQL alike, one file per format:
//
//   - snapshot.go: the snapshot frame of formats 2 to 8 and reading any
//     snapshot; snapshot_v1.go: format 1, plain JSON
//   - body.go: the binary snapshot body; ledger.go: format 5's ledger;
//     accepted.go: format 6's accepted shapes; overrides.go: format 7's
//     policy overrides; texts.go: format 8's texts of personalised
//     notifications
//   - journal.go: journal lines of formats 1 to 3; entry.go: the binary
//     entry encoding of formats 2 and 3
//   - varint.go: the primitives all binary encodings are made of
//
// Snapshot, format 8: one JSON header line ({"version":8,"lineage":...,
// "service":{"kind":"base_url","host":...}}),
// a binary body, the CRC-32C of the header line and the body (4 bytes,
// little endian) and snapshotTrailer. The body is columnar per message so
// a million targets cost a few bytes each: a string table (fingerprints,
// request ids, reasons, messages), the distinct outcome records, the
// target ids sorted and front-coded, and runs of (record, count) over
// those ids. Format 6 is format 5 with the service the deliveries went to
// in the header. Format 5 adds the ledger after the messages (see
// encoder.ledger): entries shaped like messages, each with the time it
// was forgotten, the fingerprints its records hold and its targets as a
// section of known length that a reader decodes only when asked (so a
// plan never decodes a forgotten campaign it does not need). Format 6 adds,
// after the ledger, the shapes a reviewed apply accepted, by address;
// format 7, after them, the deny policies applies overrode; format 8,
// after those, what personalised notifications sent each target, and a
// content's template (after its badge count). Format 4 is
// format 3 with the header under the checksum, so
// an edited serial or lineage is refused; format 3 added to format 2 each
// record's unanswered count and each message's earlier tags. Formats 3, 2
// and 1 (one plain JSON object) are still read; the next write migrates
// them.
//
// Journal: checksummed lines. The first is a JSON header naming the
// snapshot the journal extends and its format; entries follow, as JSON in
// format 1 and, in format 2, as the binary entry encoding with '\n' and
// '\\' escaped, so a line is still a line. Format 3 escapes NUL too, so no
// line holds one: a format-3 journal may be written over zeros laid down
// ahead, and ends where they start (ReadJournalWith). A move entry (type
// 4) adds each item's new address after the item; journals without moves
// read as before. An item's flags byte (once the boolean of its content)
// says whether a content and its targets' texts follow.
package statefile
