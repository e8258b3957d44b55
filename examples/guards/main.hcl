# Guards: nothing reaches a device that nobody meant to send.
service {
  sandbox     = "sandbox.hcl"
  environment = "test"
  api_key_env = "PUSHFORM_API_KEY"
}

variable "max_audience" {
  type        = number
  default     = 1000
  description = "The most targets the Black Friday campaign may reach."
  validation {
    condition     = var.max_audience > 0
    error_message = "max_audience must be positive: at ${var.max_audience} no Black Friday plan could send anything."
  }
}

locals {
  shoppers = [for i in range(300) : format("shopper-%03d", i)]
  first_10 = slice(local.shoppers, 0, 10)
}

# At most two pushes per shopper per day, across everything in this state.
# Badge updates are never held back.
frequency_cap {
  max = 2
  per = "24h"
}

# notification.welcome was renamed: the state recorded under the old
# address belongs to the new one, and nothing is sent again.
moved {
  from = notification.welcome
  to   = campaign.onboarding.notification.welcome
}

campaign "onboarding" {
  notification "welcome" {
    user_ids = local.first_10
    title    = "Welcome"
    body     = "Glad you are here"
    tag      = "welcome"
  }
}

notification "reminder" {
  user_ids  = local.first_10
  title     = "Your cart misses you"
  body      = "Three items are waiting"
  tag       = "cart-reminder"
  send_rate = "600/minute" # this notification's own pace
}

campaign "black_friday" {
  send_rate   = "6000/minute"    # the campaign's sends together
  max_targets = var.max_audience # a plan reaching more fails before sending

  # Only one Black Friday push a day: last_call waits for the next day.
  frequency_cap {
    max = 1
    per = "24h"
  }

  notification "early_bird" {
    user_ids    = local.shoppers
    title       = "Early bird"
    body        = "Doors open at eight"
    tag         = "bf-2030-early"
    send_after  = "2030-11-29T06:00:00Z"
    send_before = "2030-11-29T08:30:00Z" # never sent, retried or replaced after this
  }

  notification "doors_open" {
    user_ids    = local.shoppers
    title       = "Doors open"
    body        = "Black Friday starts now"
    tag         = "bf-2030"
    send_after  = "2030-11-29T08:00:00Z"
    send_before = "2030-11-29T20:00:00Z"
  }

  notification "last_call" {
    user_ids    = local.shoppers
    title       = "Last call"
    body        = "Black Friday ends tonight"
    tag         = "bf-2030-last"
    send_after  = "2030-11-29T08:00:00Z"
    send_before = "2030-11-30T20:00:00Z"
  }
}
