# Seed of the embedded sandbox for scripts/screenshot-plan.sh --personal.
api_key "sandbox-production-key" { environment = "production" }

user "ann" {
  device "ann-phone" { environment = "production" }
}
user "bruno" {
  device "bruno-phone" { environment = "production" }
}
user "chloe" {
  device "chloe-phone" { environment = "production" }
}
user "dieter" {
  device "dieter-phone" { environment = "production" }
}
user "gus" {
  device "gus-phone" { environment = "production" }
}
user_range "shopper-%04d" {
  count       = 1200
  device      = "shopper-phone-%04d"
  environment = "production"
}
