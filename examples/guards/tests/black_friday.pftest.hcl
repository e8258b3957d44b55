# Black Friday 2030, applied day by day on the sandbox's simulated clock:
# what is due goes, what expired never does, the caps hold the rest back,
# and the campaign's rate paces its sends.

run "the_week_before" {
  command = apply
  now     = "2030-11-28T09:00:00Z"

  assert {
    condition     = [for c in plan.changes : c.action if startswith(c.address, "campaign.black_friday.")] == ["wait", "wait", "wait"]
    error_message = "the Black Friday notifications wait for send_after"
  }
  assert {
    condition     = toset([for n in device("phone-000").inbox : n.title]) == toset(["Welcome", "Your cart misses you"])
    error_message = "the first ten shoppers have the welcome and the reminder"
  }
}

run "black_friday" {
  command = apply
  now     = "2030-11-29T10:00:00Z"

  assert {
    condition     = one([for c in plan.changes : c.action if c.address == "campaign.black_friday.notification.early_bird"]) == "expired"
    error_message = "early_bird expired at 08:30: it is never sent"
  }
  assert {
    condition     = one([for c in plan.changes : c.targets.send if c.address == "campaign.black_friday.notification.doors_open"]) == 300
    error_message = "doors_open goes to all 300 shoppers"
  }
  assert {
    condition     = one([for c in plan.changes : c.action if c.address == "campaign.black_friday.notification.last_call"]) == "capped"
    error_message = "last_call is held back by the campaign's cap of one push a day"
  }
  assert {
    condition     = plan.pacing[0].group == "campaign.black_friday" && plan.pacing[0].requests == 3 && plan.pacing[0].seconds == 3
    error_message = "6000/minute paces the 300 sends over 3 requests, about 3 seconds"
  }
  assert {
    condition     = history_user("shopper-299")[0].time == "2030-11-29T10:00:02Z"
    error_message = "the last shopper's request went 2 seconds after the first"
  }
  assert {
    condition     = length([for i in range(300) : i if length(device(format("phone-%03d", i)).inbox) > 0 && device(format("phone-%03d", i)).inbox[0].tag == "bf-2030-early"]) == 0
    error_message = "nobody has early_bird"
  }
}

run "the_day_after" {
  command = apply
  now     = "2030-11-30T11:00:00Z"

  assert {
    condition     = one([for c in plan.changes : c.targets.send if c.address == "campaign.black_friday.notification.last_call"]) == 300
    error_message = "a day after doors_open, last_call goes"
  }
  assert {
    condition     = [for n in device("phone-150").inbox : n.title] == ["Doors open", "Last call"]
    error_message = "a shopper has doors_open, then last_call"
  }
}

run "max_audience_must_be_positive" {
  variables {
    max_audience = 0
  }
  expect_failures = [var.max_audience]
}
