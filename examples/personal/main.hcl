# Each person in their own language and with their own name: the text is
# filled in per person from users.csv at plan time. It runs against the
# embedded sandbox in sandbox.hcl.
service {
  sandbox     = "sandbox.hcl"
  environment = "test"
}

data "recipients" "everyone" {}

# What templates read as user.*: one row per user, by user_id.
user_data {
  attributes = { for r in csvdecode(file("users.csv")) : r.user_id => r }
  locale     = "locale" # the column holding each user's locale
}

# Every notification has these translations; its own text is English.
locales {
  required = ["en", "fr", "de"]
  default  = "en"
}

campaign "shipping" {
  notification "shipped" {
    user_ids    = data.recipients.everyone.user_ids
    title       = "Hi ${user.first_name == "" ? "there" : title(user.first_name)}, your order shipped"
    body        = "It is on its way to ${user.city}."
    open_to_url = "https://shop.example.com/orders/${user.id}"
    tag         = "shipped-2026-11"

    translation "fr" {
      title = "Bonjour ${user.first_name == "" ? "à vous" : title(user.first_name)}, votre commande est partie"
      body  = "Elle est en route pour ${user.city}."
    }
    translation "fr-CA" {
      title = "Allô ${user.first_name == "" ? "à vous" : title(user.first_name)}, votre commande est partie"
    }
    translation "de" {
      title = "Hallo ${user.first_name == "" ? "zusammen" : title(user.first_name)}, Ihre Bestellung ist unterwegs"
      body  = "Sie ist auf dem Weg nach ${user.city}."
    }
  }
}
