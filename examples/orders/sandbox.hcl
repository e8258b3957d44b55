api_key "sandbox-test-key" { environment = "test" }

user "alice" {
  device "alice-phone" { environment = "test" }
}

user "bob" {
  device "bob-phone" {
    environment = "test"
    online      = false # gets only the newest notification per tag when back online
  }
  device "bob-old-phone" {
    environment = "test"
    push_token  = false
  }
}
