# The campaign as merged: the state the pull request is planned against.
service {
  sandbox     = "sandbox.hcl"
  environment = "production"
  api_key_env = "PUSHFORM_API_KEY"
}

data "recipients" "opted_in" {}

topic "deals" { description = "Daily deals" }

campaign "spring_sale" {
  notification "announce" {
    user_ids    = data.recipients.opted_in.user_ids
    title       = "Spring sale"
    body        = "Everything 20% off until Sunday"
    open_to_url = "https://shop.example.com/sale"
    tag         = "spring-sale-2026"
  }

  notification "last_day" {
    user_ids = ["alice", "bob"]
    title    = "Last day"
    body     = "The spring sale ends tonight"
    tag      = "sale-last-day"
  }
}

notification "welcome" {
  user_ids = ["alice", "bob", "erin"]
  title    = "Welcome"
  body     = "Thanks for joining"
  tag      = "welcome"
}

notification "beta_invite" {
  user_ids = ["dave"]
  title    = "You're in the beta"
  body     = "Try the new checkout first"
}
