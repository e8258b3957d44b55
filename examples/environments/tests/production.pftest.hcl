# The production variables reach the production app of every beta user,
# Carol's too, and no tester's phone.

variables {
  environment = "production"
  api_key_env = "PUSHFORM_PRODUCTION_API_KEY"
  beta_users  = ["alice", "bob", "carol"]
}

run "production_app" {
  command = apply

  assert {
    condition     = alltrue([for d in ["alice-phone", "bob-phone", "carol-phone"] : [for n in device(d).inbox : n.title] == ["You're invited"]])
    error_message = "every production phone has the invite"
  }
  assert {
    condition     = length(device("alice-test-phone").inbox) + length(device("bob-test-phone").inbox) == 0
    error_message = "no test phone has it"
  }
}
