# The quickstart runs against an embedded sandbox seeded from sandbox.hcl:
# no server, no real devices. Try: pushform validate, then pushform plan.
service {
  sandbox     = "sandbox.hcl"
  environment = "test"
  api_key_env = "PUSHFORM_API_KEY"
}

# Everyone who can receive a push right now (GET /push-notifications/recipients).
data "recipients" "opted_in" {}

locals {
  shop = "https://shop.example.com"
}

campaign "welcome" {
  description = "Welcome everyone who opted in"

  notification "hello" {
    user_ids    = data.recipients.opted_in.user_ids
    title       = "Welcome to the shop"
    body        = "Thanks for turning on notifications."
    open_to_url = "${local.shop}/welcome"
    tag         = "welcome-2026"
  }
}

notification "beta_invite" {
  user_ids = ["alice", "bob"]
  title    = "You're invited"
  body     = "Try the new checkout before everyone else."
}

badge "reset" {
  device_ids  = ["alice-phone"]
  badge_count = 0
}
