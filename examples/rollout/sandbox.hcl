# The embedded sandbox of the rollout example: 500 customers, one phone each.
api_key "sandbox-test-key" { environment = "test" }

user_range "customer-%03d" {
  count       = 500
  device      = "phone-%03d"
  environment = "test"
}
