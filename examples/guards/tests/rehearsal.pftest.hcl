# Black Friday planned from scratch at 09:00, as plan --now rehearses it:
# the frequency caps decide in address order within one plan.

run "black_friday_morning" {
  now = "2030-11-29T09:00:00Z"

  assert {
    condition     = one([for c in plan.changes : c.action if c.address == "campaign.black_friday.notification.last_call"]) == "capped"
    error_message = "last_call comes after doors_open in the same plan: the campaign's cap holds it"
  }
  assert {
    condition     = one([for c in plan.changes : c.targets.capped if c.address == "notification.reminder"]) == 10
    error_message = "the reminder is held by the cap of two a day: doors_open and the welcome come first"
  }
}
