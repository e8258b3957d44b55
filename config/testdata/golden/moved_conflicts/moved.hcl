moved {
  from = "notification.hello"
  to   = notification.welcome
}

moved {
  from = topic.deals
  to   = notification.welcome
}

moved {
  from = badge.old
  to   = notification.welcome
}

moved {
  from = notification.a
  to   = notification.b
}

moved {
  from = badge.x[0]
  to   = badge.reset
}

moved {
  from = notification.z
  to   = notification.c
}
