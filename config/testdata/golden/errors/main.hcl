service {
  environment = "staging"
  api_key_env = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
  base_url = "http://push.example.com/v1"
  colour = "blue"
}
variable "n" { type = number }
locals {
  a = local.b
  b = local.a
  c = local.nope
}
notification "x" {
  user_ids = ["a", "", "a"]
  device_ids = ["d"]
  title = "hi"
}
badge "y" {
  topics = ["dealz"]
  badge_count = -1
  title = "t"
}
notification "z" {
  for_each = ["a"]
  user_ids = []
}
notification "x" {
  user_ids = data.recipients.none.user_ids
  title = "a"
  body = "b"
  open_to_url = "/relative"
  send_after = "tomorrow"
  tag = ""
}
