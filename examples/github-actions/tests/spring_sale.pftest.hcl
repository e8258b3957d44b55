# The spring sale against the seed of the rehearsal job, in-process: no
# database, no key, and never the base_url of the real service. What the
# pull request's plan job runs before it posts the plan.

sandbox {
  seed = "sandbox/seed.hcl"
}

run "announce" {
  command = apply
  now     = "2027-03-20T12:00:00Z"

  assert {
    condition     = [for d in ["alice-phone", "bob-phone"] : [for n in device(d).inbox : n.title]] == [["Spring sale"], ["Spring sale"]]
    error_message = "Alice and Bob have the announcement"
  }
  assert {
    condition     = one([for c in plan.changes : c.action if c.address == "campaign.spring_sale.notification.reminder"]) == "wait"
    error_message = "the reminder waits for its send_after, the last day"
  }
}

run "last_day" {
  command = apply
  now     = "2027-03-21T08:30:00Z"

  assert {
    condition     = [for d in ["alice-phone", "bob-phone"] : [for n in device(d).inbox : n.title]] == [["Spring sale", "Last day"], ["Spring sale", "Last day"]]
    error_message = "on the last day the reminder reaches the deals topic's phones"
  }
  assert {
    condition     = one([for r in requests : r.notifications[0].topics if r.endpoint == "send"]) == tolist(["deals"])
    error_message = "it is sent to the topic, not to a list of users"
  }
}

run "sent_once" {
  now = "2027-03-22T08:30:00Z"

  assert {
    condition     = !plan.has_changes
    error_message = "nothing is sent twice"
  }
  assert {
    condition     = plan.service.kind == "sandbox"
    error_message = "the plan names the simulated service, never the real one"
  }
}
