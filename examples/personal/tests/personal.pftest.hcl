# Each person gets their own text in their own language; a person the
# data does not list is held and gets nothing; a second apply sends
# nothing, and nor does a fixed typo in the data.

run "first_apply" {
  command = apply

  assert {
    condition     = one([for c in plan.changes : c.locales if c.address == "campaign.shipping.notification.shipped"]) == tomap({ en = 3, de = 1, fr = 1, "fr-CA" = 1 })
    error_message = "three people get the English text, one each the German, French and Canadian French"
  }
  assert {
    condition     = one([for c in plan.changes : c.targets.held_by_reason if c.address == "campaign.shipping.notification.shipped"]) == tomap({ "not in user_data" = 1 })
    error_message = "gus, who has no row in users.csv, is held"
  }
  assert {
    condition     = [for n in device("chloe-phone").inbox : n.title] == ["Allô Chloé, votre commande est partie"]
    error_message = "Chloé (fr-CA) gets the fr-CA title and the French body"
  }
  assert {
    condition     = [for n in device("emma-phone").inbox : n.title] == ["Hi there, your order shipped"]
    error_message = "Emma, who has no first name, is greeted \"there\""
  }
  assert {
    condition     = length(device("gus-phone").inbox) == 0
    error_message = "gus receives nothing, never half a text"
  }
  assert {
    condition     = [for d in history_user("dieter") : d.text.title] == ["Hallo Dieter, Ihre Bestellung ist unterwegs"]
    error_message = "history has the text Dieter was sent"
  }
}

run "second_apply" {
  command = apply

  assert {
    condition     = !plan.has_changes && !apply.changes
    error_message = "a second apply sends nothing"
  }
}
