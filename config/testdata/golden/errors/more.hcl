variable "count" {
  type    = number
  default = "many"
}

campaign "spring" {
  notification "announce" {
    user_ids    = data.recipients.opted_in.user_ids
    title       = "Spring"
    body        = upper(42, 1)
    badge_count = 1.5
  }
}
