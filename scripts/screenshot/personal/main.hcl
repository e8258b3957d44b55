# The campaign of scripts/screenshot-plan.sh --personal: each person's
# name and language, three samples in the comment.
service {
  sandbox     = "sandbox.hcl"
  environment = "production"
  api_key_env = "PUSHFORM_API_KEY"
}

data "recipients" "everyone" {}

user_data {
  attributes = { for r in csvdecode(file("users.csv")) : r.user_id => r }
  locale     = "locale"
  samples    = 3
}

locales {
  required = ["en", "fr", "de"]
  default  = "en"
}

campaign "shipping" {
  notification "shipped" {
    user_ids    = data.recipients.everyone.user_ids
    title       = "Hi ${title(user.first_name)}, your order is on its way to ${user.city}"
    body        = "It left our warehouse this morning and arrives tomorrow."
    open_to_url = "https://shop.example.com/orders/${user.id}"
    tag         = "shipped-2026-04"

    translation "fr" {
      title = "Bonjour ${title(user.first_name)}, votre commande part pour ${user.city}"
      body  = "Elle a quitté notre entrepôt ce matin et arrive demain."
    }
    translation "de" {
      title = "Hallo ${title(user.first_name)}, Ihre Bestellung ist unterwegs nach ${user.city}"
      body  = "Sie hat heute Morgen unser Lager verlassen und kommt morgen an."
    }
  }
}
