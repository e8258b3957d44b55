# Seed of `pushform sandbox`, for the workflow's rehearsal job and for
# trying the campaign locally: simulated devices of the production app,
# and a key that reaches only them (not a secret). It lives in its own
# directory so that pushform does not load it as configuration.
api_key "sandbox-production-key" { environment = "production" }

user "alice" {
  device "alice-phone" { environment = "production" }
}

user "bob" {
  device "bob-phone" { environment = "production" }
}

topic "deals" { devices = ["alice-phone", "bob-phone"] }
