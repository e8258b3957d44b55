service {
  environment = "test"
}

notification "welcome" {
  user_ids = ["u1"]
  title    = "Welcome"
  body     = "Glad you are here"
}

badge "reset" {
  device_ids  = ["d1"]
  badge_count = 0
}
