# Topics reach their subscribers' devices; badges are set per device from
# the unread map.

run "send" {
  command = apply

  assert {
    condition     = toset([for n in device("ann-phone").inbox : n.title]) == toset(["Deal of the day", "What's new"])
    error_message = "Ann subscribes to both topics"
  }
  assert {
    condition     = [for n in device("kiosk-1").inbox : n.title] == ["Deal of the day"] && device("kiosk-1").badge == 3
    error_message = "the kiosk has the deal, and a badge of 3"
  }
  assert {
    condition     = length(device("ben-phone").inbox) == 0
    error_message = "Ben's phone has no push token"
  }
  assert {
    condition     = one([for r in requests : r if length([for n in r.notifications : n if n.topics != null]) > 0]) != null
    error_message = "the topic notifications go in one request"
  }
}

run "badges_follow_the_map" {
  command = apply
  variables {
    unread = { "kiosk-1" = 0 }
  }

  assert {
    condition     = device("kiosk-1").badge == 0 && device("ann-phone").badge == 1
    error_message = "the kiosk's badge is cleared; Ann's, no longer in the map, is forgotten, not changed"
  }
}
