moved {
  from = notification.a
  to   = notification.b
}

moved {
  from = notification.b
  to   = notification.c
}

moved {
  from = notification.c
  to   = notification.a
}
