service {
  sandbox     = "sandbox.hcl"
  environment = "test"
  api_key_env = "PUSHFORM_API_KEY"
}

variable "shop_url" {
  type        = string
  default     = "https://shop.example.com"
  description = "Where the order pages live"
}

locals {
  orders = { for o in csvdecode(file("orders.csv")) : o.order_id => o }
}

# One notification per order: the address is notification.order_shipped["A-1001"].
notification "order_shipped" {
  for_each = local.orders

  user_ids    = [each.value.user_id]
  title       = "Order ${each.key} shipped"
  body        = "It arrives ${each.value.eta}."
  open_to_url = "${var.shop_url}/orders/${each.key}"
  # One tag per order: a later update about the same order replaces this one.
  tag                  = "order-${each.key}"
  silent_in_foreground = true
}
