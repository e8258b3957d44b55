# Seed of the embedded sandbox (not configuration: the service block's
# sandbox attribute names this file, so pushform does not load it as such).
api_key "sandbox-test-key" { environment = "test" }

user "ann" {
  device "ann-phone" { environment = "test" }
}
user "bruno" {
  device "bruno-phone" { environment = "test" }
}
user "chloe" {
  device "chloe-phone" { environment = "test" }
}
user "dieter" {
  device "dieter-phone" { environment = "test" }
}
user "emma" {
  device "emma-phone" { environment = "test" }
}
user "farid" {
  device "farid-phone" { environment = "test" }
}
user "gus" {
  device "gus-phone" { environment = "test" }
}
