service {
  environment = "test"
}

backend "pg" {
  conn_str_env = "postgres://push:hunter2-Pa55@db.example.com/push"
  schema_name  = "Push-State"
  state_name   = ""
}

backend "s3" {}

frequency_cap {
  max = 0
  per = "daily"
}

campaign "bf" {
  send_rate   = "10000/day"
  max_targets = 2

  notification "doors" {
    user_ids    = ["u1", "u2", "u3"]
    title       = "Doors open"
    body        = "Now"
    send_after  = "2026-11-27T20:00:00Z"
    send_before = "2026-11-27T08:00:00Z"
    send_rate   = "0/minute"
    tag         = "bf-2026"
    max_targets = 2
  }
}
