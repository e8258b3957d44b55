service {
  environment = "test"
}

notification "spring" {
  user_ids = ["alice", "bob", "carol"]
  title    = "Spring sale"
  body     = "20% off"
  tag      = "promo"
}

campaign "summer" {
  notification "announce" {
    user_ids = ["bob", "carol", "dave"]
    title    = "Summer sale"
    body     = "30% off"
    tag      = "promo"
  }
}

notification "shipped" {
  for_each = { "A-1" = "alice", "A-2" = "alice", "A-3" = "bob" }
  user_ids = [each.value]
  title    = "Order ${each.key} shipped"
  body     = "Soon"
  tag      = "order"
}

notification "replaced_on_purpose" {
  user_ids   = ["alice"]
  title      = "Spring sale, last day"
  body       = "20% off until midnight"
  tag        = "promo"
  shared_tag = true
}
