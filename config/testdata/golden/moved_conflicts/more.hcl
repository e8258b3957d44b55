moved {
  from = notification.a
  to   = notification.c
}
