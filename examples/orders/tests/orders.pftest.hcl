# One notification per row of orders.csv, each with its own address and
# tag: a later change to the orders' messages replaces them on the phones
# and adds none.

run "one_per_order" {
  assert {
    condition     = [for c in plan.changes : c.address] == ["notification.order_shipped[\"A-1001\"]", "notification.order_shipped[\"A-1002\"]", "notification.order_shipped[\"A-1003\"]"]
    error_message = "one address per row of orders.csv"
  }
  assert {
    condition     = [for c in plan.changes : c.content.tag] == ["order-A-1001", "order-A-1002", "order-A-1003"]
    error_message = "one tag per order"
  }
}

run "shipped" {
  command = apply

  assert {
    condition     = toset([for n in device("alice-phone").inbox : n.title]) == toset(["Order A-1001 shipped", "Order A-1003 shipped"])
    error_message = "Alice sees both her orders"
  }
  assert {
    condition     = alltrue([for n in device("alice-phone").inbox : n.open_to_url == "https://shop.example.com/orders/${trimsuffix(trimprefix(n.title, "Order "), " shipped")}" && n.silent_in_foreground])
    error_message = "each links to its order page, silent in the foreground"
  }
  assert {
    condition     = length(device("bob-phone").inbox) == 0 && [for n in device("bob-phone").pending : n.body] == ["It arrives Wednesday."]
    error_message = "Bob's phone is offline: it holds his order until it comes online"
  }
}

run "new_shop_url" {
  command = apply
  variables {
    shop_url = "https://shop.example.org"
  }

  assert {
    condition     = [for c in plan.changes : c.action] == ["replace", "replace", "replace"]
    error_message = "a changed message replaces each order's notification (same tag)"
  }
  assert {
    condition     = toset([for n in device("alice-phone").inbox : n.open_to_url]) == toset(["https://shop.example.org/orders/A-1001", "https://shop.example.org/orders/A-1003"])
    error_message = "Alice still sees two notifications, now with the new links"
  }
  assert {
    condition     = device("alice-phone").received == 4
    error_message = "four were shown to Alice: two, then their two replacements"
  }
}
