# Seed of the embedded sandbox (not configuration: the service block's
# sandbox attribute names this file, so pushform does not load it as such).
api_key "sandbox-test-key" { environment = "test" }
api_key "sandbox-production-key" { environment = "production" }

user "alice" {
  device "alice-phone" {
    environment   = "test"
    shell_version = "4.300"
  }
}

user "bob" {
  device "bob-phone" { environment = "test" }
  device "bob-tablet" {
    environment = "test"
    push_token  = false # app uninstalled
  }
}

user "carol" {
  device "carol-phone" { environment = "production" }
}

user "dave" {
  device "dave-phone" {
    environment = "test"
    push_token  = false
    last_seen   = "2026-03-01T10:00:00Z"
  }
}

topic "news" { devices = ["alice-phone", "bob-phone"] }
