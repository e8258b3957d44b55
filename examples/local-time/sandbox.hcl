api_key "sandbox-test-key" { environment = "test" }

user "ana" {
  device "ana-phone" { environment = "test" }
}
user "ben" {
  device "ben-phone" { environment = "test" }
}
user "chloe" {
  device "chloe-phone" { environment = "test" }
}
user "dan" {
  device "dan-phone" { environment = "test" }
}
user "eve" {
  device "eve-phone" { environment = "test" }
}
user "fay" {
  device "fay-phone" { environment = "test" }
}
