# The pull request: an edit, an addition, a rename with moved, a tag
# change, a forget (beta_invite is gone) and an already-delivered (its
# content, moved into onboarding without a moved block: dave has it).
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
    body        = "Everything 30% off until Monday"
    open_to_url = "https://shop.example.com/sale"
    tag         = "spring-sale-2026"
  }

  notification "last_day" {
    user_ids = ["alice", "bob"]
    title    = "Last day"
    body     = "The spring sale ends tonight"
    tag      = "sale-final-day"
  }

  notification "flash" {
    topics      = ["deals"]
    title       = "Flash sale: two hours only, on everything in the garden section"
    body        = "From 6 pm to 8 pm tonight, every plant, pot and tool is half price. Open the app to see the deals before they go."
    open_to_url = "http://shop.example.com/flash"
    tag         = "flash-2026-04"
  }
}

moved {
  from = notification.welcome
  to   = campaign.onboarding.notification.welcome
}

campaign "onboarding" {
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
}
