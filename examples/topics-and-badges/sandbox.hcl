api_key "sandbox-test-key" { environment = "test" }

user "ann" {
  device "ann-phone" { environment = "test" }
}

user "ben" {
  device "ben-phone" {
    environment = "test"
    push_token  = false
  }
}

device "kiosk-1" { environment = "test" }

topic "deals" { devices = ["ann-phone", "kiosk-1"] }
topic "news" { devices = ["ann-phone", "ben-phone"] }
