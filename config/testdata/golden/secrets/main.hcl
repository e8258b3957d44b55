service {
  environment = "test"
  base_url    = "https://sk4eC39HqLyjWDarjtT1zdp7dc@push.example.com/v1"
  api_key_env = "sk_live_4eC39HqLyjWDarjtT1zdp7dc" # pasted by mistake: sk_live_4eC39HqLyjWDarjtT1zdp7dc
  api_key     = "k-test-canary-0123456789"
}

backend "pg" {
  conn_str_env = "postgres://u:pw@h/db"
}

locals {
  token = file("sk_live_4eC39HqLyjWDarjtT1zdp7dc.txt")
}
