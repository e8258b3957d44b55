# Rollout: a push to everyone cannot be recalled, so it goes to a few first.
service {
  sandbox     = "sandbox.hcl"
  environment = "test"
  api_key_env = "PUSHFORM_API_KEY"
  # pushform test-send ADDR sends to these devices when given none.
  test_devices = ["phone-000"]
}

locals {
  customers = [for i in range(500) : format("customer-%03d", i)]
}

# The spring sale reaches 10% of the customers, then half, then everyone,
# at least 30 minutes apart, and only while at most 2% of a stage fails.
notification "spring_sale" {
  user_ids = local.customers
  title    = "Spring sale"
  body     = "Everything 20% off until Sunday"
  tag      = "spring-sale"
  rollout {
    stages           = ["10%", "50%", "100%"]
    wait             = "30m"
    max_failure_rate = "2%"
  }
}

# A campaign's rollout is the default of its notifications: each is rolled
# out on its own buckets. salt keeps the buckets of an earlier name.
campaign "app_update" {
  rollout {
    stages = ["5%", "100%"]
    wait   = "1h"
  }

  notification "new_version" {
    user_ids = slice(local.customers, 0, 200)
    title    = "Version 5 is here"
    body     = "Dark mode, at last"
    tag      = "app-update-5"
    salt     = "notification.new_version"
  }
}

# Two versions of the newsletter, half the customers each, and 5% who get
# neither: the holdout, recorded so the brand can compare. Each customer gets
# exactly one; history --variants --json exports who got which.
notification "newsletter" {
  user_ids = local.customers
  tag      = "newsletter"
  variant "a" {
    weight = 50
    title  = "Spring picks"
    body   = "Our five favourites this week"
  }
  variant "b" {
    weight = 50
    title  = "Fresh for spring"
    body   = "Five new arrivals, until Sunday"
  }
  holdout = "5%"
}
