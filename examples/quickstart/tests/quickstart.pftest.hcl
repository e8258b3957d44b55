# The quickstart: apply welcomes everyone who can receive a push, invites
# Alice and Bob and resets Alice's badge; a second apply sends nothing.

run "first_apply" {
  command = apply

  assert {
    condition     = one([for c in plan.changes : c.targets.send if c.address == "campaign.welcome.notification.hello"]) == 2
    error_message = "the recipients list holds Alice and Bob: Carol has only the production app, Dave no push token"
  }
  assert {
    condition     = toset([for n in device("alice-phone").inbox : n.title]) == toset(["Welcome to the shop", "You're invited"])
    error_message = "Alice has the welcome and the invite"
  }
  assert {
    condition     = device("alice-phone").badge == 0 && length(device("carol-phone").inbox) == 0
    error_message = "Alice's badge is reset; Carol has nothing"
  }
  assert {
    condition     = length([for r in requests : r if r.endpoint == "recipients"]) == 1
    error_message = "the recipients list is fetched once"
  }
}

run "second_apply" {
  command = apply

  assert {
    condition     = !plan.has_changes && !apply.changes
    error_message = "a second apply sends nothing"
  }
  assert {
    condition     = [for d in history_user("bob") : d.outcome] == ["delivered", "delivered"]
    error_message = "the history of Bob has his two deliveries"
  }
}
