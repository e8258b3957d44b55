# The campaign the example workflow (.github/workflows/pushform.yml) plans in
# pull requests and applies on merge. Locally it runs against the embedded
# sandbox; in CI, PUSHFORM_BASE_URL (a repository variable) points it at the
# real service, with the key the workflow puts in PUSHFORM_API_KEY. Its
# state is in PostgreSQL (backend.hcl).
service {
  sandbox     = "sandbox.hcl"
  environment = "test"
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
