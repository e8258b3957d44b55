# The embedded sandbox of the guards example: 300 shoppers, one phone each.
api_key "sandbox-test-key" { environment = "test" }

user_range "shopper-%03d" {
  count       = 300
  device      = "phone-%03d"
  environment = "test"
}
