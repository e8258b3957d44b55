service {
  environment = "production"
  base_url    = "https://push.example.com/v1"
}

topic "deals" {}

notification "promo" {
  topics = ["deals", "dealz"]
  title  = "Deal"
  body   = "Half price"
}

badge "reset" {
  device_ids  = ["d1", "d2", "d1"]
  badge_count = 0
}
