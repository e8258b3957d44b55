# Seed of the embedded sandbox for trying the campaign locally; CI uses the
# real service instead (PUSHFORM_BASE_URL).
api_key "sandbox-test-key" { environment = "test" }

user "alice" {
  device "alice-phone" { environment = "test" }
}

user "bob" {
  device "bob-phone" { environment = "test" }
}

topic "deals" { devices = ["alice-phone", "bob-phone"] }
