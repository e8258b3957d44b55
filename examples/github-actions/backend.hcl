# The state lives in PostgreSQL, shared by every runner: plans and applies
# of all pull requests and merges read and lock the same state, so a stale
# plan is refused and two applies take turns. The connection string comes
# from the environment variable named here (in CI, a secret); it is never
# written in the configuration.
backend "pg" {
  conn_str_env = "PUSHFORM_PG_CONN_STR"
  schema_name  = "pushform"
  state_name   = "spring-sale"
}
