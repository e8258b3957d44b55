moved {
  from = notification.welcome
  to   = campaign.onboarding.notification.welcome
}

moved {
  from = badge.old
  to   = badge.reset["a"]
}

moved {
  from = notification.hello
  to   = notification.hi
}

moved {
  from = notification.hi
  to   = notification.greeting
}
