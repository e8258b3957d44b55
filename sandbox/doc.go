// Package sandbox is a faithful local implementation of the Push
// Notification Service, API v1: the embedded
// default of `service { sandbox = "..." }`, the target of `pushform
// sandbox`, and the test double of the client and of apply.
//
// A Seed (ParseSeed, LoadSeedFile) gives API keys, users, devices, topics
// and user_range populations; New builds a Server, an http.Handler serving
//
//	POST /v1/push-notifications/send
//	GET  /v1/push-notifications/recipients
//	GET  /_sandbox/devices               ids of the devices that received anything
//	GET  /_sandbox/devices/{id}          a DeviceView
//	PATCH /_sandbox/devices/{id}         {"push_token","permission","online"}
//	GET  /_sandbox/log/{requestId}       the notification log entry
//	GET  /_sandbox/stats                 {"sendRequests","targets","deliveries",...}
//
// # Where the spec says "not shown"
//
// The sandbox picks one answer (docs/service.md lists the others its
// flags switch to):
//   - The outcome field is "status"; unreachableSince is RFC 3339 in UTC.
//   - 200 and 207 have the same body {"results":[...]}: one entry per userId
//     and per deviceId, one per topics object echoing its array, in request
//     order. Options.Empty200 answers a fully delivered request (every
//     target delivered) with an empty 200 body instead; Options.TopicResults
//     "per-topic" answers a topics object with one entry per topic
//     ({"topics":["a"]}), each for the devices that topic reached first.
//   - 400 is {"issues":[{"path":[INDEX,"FIELD"(,ELEMENT)],"message":"..."}]}
//     listing every issue of the request; path [] is about the request as a
//     whole (not an array, empty, bad JSON, more than 500 userIds in all).
//     Options.IssuesShape gives the other shapes a service may use:
//     "index" ({"index":1,"field":"userIds[3]","message"}), "pointer"
//     ({"pointer":"/1/userIds/3","message"}) or "message" (only
//     {"message":"[1] userIds[3]: ..."}); a request-level issue then has
//     no index, an empty pointer, or no "[N]".
//     Validation beyond spec 2.1: unknown fields, null where a value is
//     expected, an empty target array or id, badgeCount that is not an
//     integer from 0 to 2^31-1, openToUrl that is not an absolute URL. An
//     empty array is a 400; Content-Type other than application/json is a
//     415; a body over MaxBodyBytes (8 MiB) a 413, both with issues.
//   - 401 (missing or unknown x-api-key), 404, 405, 429 and 5xx answer
//     {"message":"..."}. Every answer carries x-request-id ("req-" and 24
//     hex digits), whatever its status.
//   - Recipients are a bare JSON array of every user id, explicit users in
//     seed order then each user_range. With Options.RecipientsShape "object"
//     they come in pages of RecipientsPageSize (1000; ?limit=1..10000):
//     {"userIds":[...],"next":"CURSOR"}, continued with ?cursor=CURSOR; the
//     last page has no "next". A cursor is a position in the user order, so
//     paging stays consistent while devices change. Options.RecipientsPaging
//     names the next page other ways: a Link header with a relative
//     rel="next" URL ("link", the body a bare array) or an absolute URL
//     under links.next ("links-next", {"data":[...],"links":{...}});
//     Options.RecipientsFaults answer a page 429 or 503 once.
//   - Options.SpecShapes and the RecipientsPaging schemes of
//     specshapes.go give the shapes of issue 38: paging in headers
//     (X-Next-Cursor, X-Total-Count), by an explicit end (hasMore false
//     beside a stale cursor), by offset or page number, or a total with no
//     way on; a body size limit answered 413 (or a request-level 400);
//     bursts of 429 and 503 on the first send requests; unreachableSince
//     and deviceCount in forms a client may not read.
//   - Options.ResultsOrder, OKBody, SinceFormat and MaxLengthAnswer give
//     the other answers a service may give: results reversed or shuffled,
//     a fully delivered 200 as nothing, {} or {"results":[]},
//     unreachableSince in epoch seconds or milliseconds, a notification over
//     MaxLength failed per target (207) rather than refused (400).
//
// # Delivery
//
// A user's devices, a device id, or the subscribers of the topics of a
// topics object (each device once) are attempted when they run the app of
// the key's environment and hold a push token; permission plays no part in
// sending (only in the recipients list, spec 2.3 rule 3). A target with no
// attempted device is skipped no_active_device (never a 207), with
// unreachableSince from the newest last_seen of the user's devices (or the
// device's own) when the seed gives one; device ids unknown or of the other
// environment are skipped the same way. An attempted device with a "fail"
// message fails; the target is delivered with the count of devices that
// took it, and failed (message: the first failing device's) only when every
// attempted device failed. Any failed target makes the answer 207.
//
// A device online shows a notification at once: a tagged one replaces the
// shown one with the same tag, received counts every one shown, the inbox
// keeps the newest 1000. An offline device holds what it is sent, the
// newest per tag (untagged ones all, badge-only updates the newest), and
// shows it when PATCHed online. A badgeCount, alone or with a
// notification, sets the badge when shown. Each id listed is delivered as
// listed: an id twice in one array gets two entries and two deliveries.
//
// The notification log keeps, per request id of an authenticated send,
// the body, the issues or the devices attempted per notification, and the
// results; the oldest entries go beyond 64 MiB.
//
// # Fault injection
//
// Faults apply to send requests only, drawn per request in arrival order
// from a PRNG seeded by Options.FaultSeed (reproducible for a sequential
// client). FailRate: half the faulty requests answer 503 with Retry-After: 1
// before anything is processed; the other half are processed (delivered and
// logged) and then answer 500: an ambiguous failure. DropRate: the
// connection is closed without an answer, half before processing and half
// after. RateLimit is a token bucket over all API requests (N a second,
// burst N); beyond it 429 with Retry-After in whole seconds. Latency delays
// every API request before it is handled. Stats count the faults.
// FailTargets fails a stable fraction of the user and device targets, and
// FailIDs the ids it names, whatever their devices (207).
//
// # In-process
//
// Transport serves a Server to an http.Client with no listener, at
// InProcessBaseURL: pushform test's simulated service.
//
// # Performance
//
// Devices live in one slice (16 bytes each until they receive something,
// then 24 more while each shows one notification at a time);
// users, device ids and topics are indexes built once; user_range ids are
// formatted and parsed on demand, so a million-user range needs no map and
// seeds in well under a second. Device state is guarded by 256 striped
// locks; a send is O(targets + devices reached) with no reflection on the
// hot path.
package sandbox
