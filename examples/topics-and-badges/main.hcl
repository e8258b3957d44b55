service {
  sandbox     = "sandbox.hcl"
  environment = "test"
  api_key_env = "PUSHFORM_API_KEY"
}

# Declared topics: a literal topic name that no block declares is a warning.
topic "deals" { description = "Daily deals" }
topic "news" { description = "Product news" }

variable "unread" {
  type    = map(number)
  default = { "kiosk-1" = 3, "ann-phone" = 1 }
}

campaign "daily" {
  description = "Daily deals and news"

  notification "deal_of_the_day" {
    topics = [topic.deals.name]
    title  = "Deal of the day"
    body   = "Headphones at half price, today only."
    tag    = "deal-of-the-day"
  }

  notification "release_notes" {
    topics      = [topic.news.name]
    title       = "What's new"
    body        = "Faster checkout and a new look."
    open_to_url = "https://shop.example.com/news"
  }
}

# Badge updates: set each device's badge to its unread count.
badge "unread" {
  for_each    = var.unread
  device_ids  = [each.key]
  badge_count = each.value
}
