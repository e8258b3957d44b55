# The campaign the example workflow (.github/workflows/pushform.yml) plans in
# pull requests and applies on merge. This is the production configuration:
# it names the real service, and the workflow puts the key in
# PUSHFORM_API_KEY. Its state is in PostgreSQL (backend.hcl). The rehearsal
# job runs it against `pushform sandbox` (sandbox/seed.hcl) on the runner,
# with a state of its own: PUSHFORM_BASE_URL points it there.
service {
  base_url    = "https://push.example.com/v1"
  environment = "production"
  api_key_env = "PUSHFORM_API_KEY"
}

topic "deals" { description = "Daily deals" }

campaign "spring_sale" {
  description = "Spring sale 2027"

  notification "announce" {
    user_ids    = ["alice", "bob"]
    title       = "Spring sale"
    body        = "Everything 20% off until Sunday"
    open_to_url = "https://shop.example.com/sale"
    tag         = "spring-sale-2027"
  }

  notification "reminder" {
    topics     = ["deals"]
    title      = "Last day"
    body       = "The spring sale ends tonight"
    tag        = "spring-sale-2027-last-day"
    send_after = "2027-03-21T08:00:00Z" # a scheduled run sends it once the time has come
  }
}
