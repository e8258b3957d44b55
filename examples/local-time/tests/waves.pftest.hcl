# Breakfast at 09:00 in each user's own zone, rehearsed over a simulated
# day: each apply sends the wave that fell due, nobody gets it twice, and
# quiet hours hold nothing urgent.
variables {
  start = "2030-03-09T18:00:00Z"
}

run "the_day_planned" {
  now = "2030-03-09T19:00:00Z"

  assert {
    condition = [for w in [for c in plan.changes : c if c.address == "campaign.breakfast.notification.menu"][0].local.waves : w.at] == [
      "2030-03-09T20:00:00Z", # Auckland
      "2030-03-10T03:30:00Z", # Kolkata
      "2030-03-10T08:00:00Z", # Paris
      "2030-03-10T13:00:00Z", # New York, on summer time since 02:00
      "2030-03-10T14:00:00Z", # fay: the default zone, Chicago
      "2030-03-10T16:00:00Z", # Los Angeles
    ]
    error_message = "one wave per zone, at 09:00 local time"
  }
}

run "auckland" {
  command = apply
  now     = "2030-03-09T20:00:00Z"

  assert {
    condition     = toset([for n in device("ana-phone").inbox : n.title]) == toset(["Good morning", "Payments are down"])
    error_message = "Ana in Auckland has the outage and her breakfast"
  }
  assert {
    condition     = [for n in device("eve-phone").inbox : n.title] == ["Payments are down"]
    error_message = "Eve in Los Angeles has the outage (it ignores quiet hours), not yet her breakfast"
  }
  assert {
    condition     = device("dan-phone").badge == 0 && length(device("dan-phone").inbox) == 0
    error_message = "Dan's badge is reset at night in New York: badges are never held"
  }
}

run "kolkata" {
  command = apply
  now     = "2030-03-10T04:00:00Z"

  assert {
    condition     = [for n in device("ben-phone").inbox : n.title] == ["Good morning"]
    error_message = "Ben in Kolkata has his breakfast"
  }
  assert {
    condition     = length(device("ana-phone").inbox) == 2
    error_message = "Ana does not get it twice"
  }
}

run "paris_and_new_york" {
  command = apply
  now     = "2030-03-10T13:00:00Z"

  assert {
    condition     = length(device("chloe-phone").inbox) == 1 && length(device("dan-phone").inbox) == 1
    error_message = "Chloe in Paris and Dan in New York (on summer time) have theirs"
  }
  assert {
    condition     = length(device("fay-phone").inbox) == 0
    error_message = "Fay, in the default zone (Chicago), waits until 14:00Z"
  }
}

run "the_last_waves" {
  command = apply
  now     = "2030-03-10T16:00:00Z"

  assert {
    condition     = [for u in ["ana", "ben", "chloe", "dan", "eve", "fay"] : length([for d in history_user(u) : d if d.address == "campaign.breakfast.notification.menu" && d.outcome == "delivered"])] == [1, 1, 1, 1, 1, 1]
    error_message = "everyone has had breakfast exactly once"
  }
  assert {
    condition     = plan.summary.targets == 2 && apply.delivered == 2
    error_message = "the last two waves (Chicago's and Los Angeles') went out together"
  }
}
