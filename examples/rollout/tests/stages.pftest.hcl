# The rollouts over a simulated morning: each stage goes out once its wait
# is over, to the customers its buckets hold, and never to anyone twice.

run "first_stages" {
  command = apply
  now     = "2030-04-01T09:00:00Z"

  assert {
    condition     = one([for c in plan.changes : c.targets.send if c.address == "notification.spring_sale"]) == 52
    error_message = "the spring sale's first stage is 10% of the 500 customers (52, by their buckets)"
  }
  assert {
    condition     = one([for c in plan.changes : c.targets.send if c.address == "campaign.app_update.notification.new_version"]) == 12
    error_message = "the app update's first stage is 5% of its 200 customers"
  }
  assert {
    condition     = sum([for c in plan.changes : c.targets.send + c.targets.holdout if startswith(c.address, "notification.newsletter.")]) == 500
    error_message = "every customer gets one newsletter variant, or is in the holdout"
  }
  assert {
    condition     = apply.delivered == plan.summary.targets && apply.failed == 0
    error_message = "everything planned was delivered"
  }
}

run "wait_not_over" {
  now = "2030-04-01T09:20:00Z"

  assert {
    condition     = one([for c in plan.changes : c.targets.send if c.address == "notification.spring_sale"]) == 0
    error_message = "the second stage waits 30 minutes"
  }
  assert {
    condition     = one([for c in plan.changes : c.rollout.next_due if c.address == "notification.spring_sale"]) == "2030-04-01T09:30:00Z"
    error_message = "the plan says when the next stage is due"
  }
}

run "second_stage" {
  command = apply
  now     = "2030-04-01T09:31:00Z"

  assert {
    condition     = one([for c in plan.changes : c.targets.send if c.address == "notification.spring_sale"]) == 194
    error_message = "the second stage takes the spring sale to half the customers"
  }
  assert {
    condition     = one([for c in plan.changes : c.targets.send if c.address == "campaign.app_update.notification.new_version"]) == 0
    error_message = "the app update waits an hour"
  }
}

run "last_stages" {
  command = apply
  now     = "2030-04-01T10:02:00Z"

  assert {
    condition     = one([for c in plan.changes : c.targets.send if c.address == "notification.spring_sale"]) == 254
    error_message = "the last stage of the spring sale reaches everyone else"
  }
  assert {
    condition     = one([for c in plan.changes : c.targets.send if c.address == "campaign.app_update.notification.new_version"]) == 188
    error_message = "the app update reaches the rest of its 200"
  }
}

run "complete" {
  now = "2030-04-02T09:00:00Z"

  assert {
    condition     = !plan.has_changes
    error_message = "nothing is left to send"
  }
  assert {
    condition     = alltrue([for i in range(500) : length([for n in device(format("phone-%03d", i)).inbox : n if n.tag == "spring-sale"]) == 1])
    error_message = "every customer has the spring sale exactly once"
  }
  assert {
    condition     = length([for i in range(500) : i if length([for n in device(format("phone-%03d", i)).inbox : n if n.tag == "newsletter"]) == 1]) == 480
    error_message = "480 customers have one newsletter; the 20 of the holdout (5% by their buckets) none"
  }
}
