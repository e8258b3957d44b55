# Breakfast at 09:00 in each user's own time, a day of waves: Auckland
# first, Los Angeles last. Runs against the embedded sandbox in sandbox.hcl.
service {
  sandbox     = "sandbox.hcl"
  environment = "test"
  api_key_env = "PUSHFORM_API_KEY"
}

variable "start" {
  type        = string
  default     = "2099-01-01T00:00:00Z" # parked until you give the day
  description = "From when: each user gets breakfast at the first 09:00 in their zone after this (RFC 3339)"
}

locals {
  users = csvdecode(file("users.csv")) # user_id,tz: the zones come from your own data
}

time_zones {
  by_user   = { for u in local.users : u.user_id => u.tz }
  by_device = { for u in local.users : "${u.user_id}-phone" => u.tz }
  default   = "America/Chicago" # fay is not in users.csv
}

quiet_hours {
  from = "21:00"
  to   = "08:00"
}

campaign "breakfast" {
  deliver_at_local = "09:00"
  send_rate        = "600/minute" # paces each wave

  notification "menu" {
    user_ids   = concat([for u in local.users : u.user_id], ["fay"])
    title      = "Good morning"
    body       = "Breakfast is on us today"
    tag        = "breakfast"
    send_after = var.start
  }
}

# Urgent: sent at once, whatever the hour where the user is.
notification "outage" {
  user_ids           = ["ana", "eve"]
  title              = "Payments are down"
  body               = "We are on it; nothing to do on your side"
  tag                = "outage"
  ignore_quiet_hours = true
}

# Badge updates are never held by quiet hours.
badge "inbox" {
  device_ids  = ["ana-phone", "dan-phone"]
  badge_count = 0
}
