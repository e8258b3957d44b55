# Seed of the embedded sandbox: one key per environment, and users with the
# test app, the production app, or both.
api_key "sandbox-test-key" { environment = "test" }
api_key "sandbox-production-key" { environment = "production" }

user "alice" {
  device "alice-test-phone" { environment = "test" }
  device "alice-phone" { environment = "production" }
}

user "bob" {
  device "bob-test-phone" { environment = "test" }
  device "bob-phone" { environment = "production" }
}

user "carol" {
  device "carol-phone" { environment = "production" }
}
