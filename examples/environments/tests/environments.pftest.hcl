# The key decides the environment: one configuration reaches the testers'
# app with the test variables, and real users' with the production ones.
# Each test file has a state of its own, as each environment does.

variables {
  environment = "test"
  api_key_env = "PUSHFORM_TEST_API_KEY"
  beta_users  = ["alice", "bob"]
}

run "test_app" {
  command = apply

  assert {
    condition     = [for n in device("alice-test-phone").inbox : n.title] == ["You're invited"] && length(device("alice-phone").inbox) == 0
    error_message = "Alice's test phone has the invite, her production phone nothing"
  }
  assert {
    condition     = apply.delivered == 2
    error_message = "Alice and Bob, on the test app"
  }
}

run "no_staging" {
  variables {
    environment = "staging"
  }
  expect_failures = [var.environment]
}
