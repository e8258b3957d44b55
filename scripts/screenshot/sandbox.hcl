# Seed of the embedded sandbox for scripts/screenshot-plan.sh.
api_key "sandbox-production-key" { environment = "production" }

user "alice" {
  device "alice-phone" { environment = "production" }
  device "alice-tablet" { environment = "production" }
}
user "bob" {
  device "bob-phone" { environment = "production" }
}
user "erin" {
  device "erin-phone" { environment = "production" }
}
user "dave" {
  device "dave-phone" { environment = "production" }
}
user_range "shopper-%04d" {
  count       = 1200
  device      = "shopper-phone-%04d"
  environment = "production"
}
topic "deals" { devices = ["alice-phone", "bob-phone", "erin-phone"] }
