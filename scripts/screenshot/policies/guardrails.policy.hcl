# The organisation's guardrails of the policy screenshot
# (scripts/screenshot-plan.sh OUT --policies).
policy "title_fits_lock_screen" {
  for_each_change = true
  condition       = change.content.title == null ? true : length(change.content.title) <= 50
  error_message   = "${change.address}: the title has ${length(coalesce(change.content.title, ""))} characters; a lock screen shows about 50"
}

policy "https_only" {
  for_each_change = true
  condition       = change.content.open_to_url == null ? true : startswith(change.content.open_to_url, "https://")
  error_message   = "${change.address} opens ${coalesce(change.content.open_to_url, "")}"
  enforcement     = "warn"
}

policy "daily_volume" {
  condition     = plan.summary.targets <= 100000
  error_message = "this plan sends ${plan.summary.targets} pushes"
}
