# One campaign directory, two environments. The environment-specific values
# live in env/*.pfvars (not *.hcl, which would be loaded as configuration),
# and each environment has its own state file:
#
#   pushform plan  --var-file env/test.pfvars       --state env/test.state
#   pushform apply --var-file env/production.pfvars --state env/production.state
#
# The state remembers its environment: pairing the production variables with
# the test state (or the reverse) is refused before anything is sent.

variable "environment" {
  type        = string
  default     = "test"
  description = "test or production: which app's devices the key reaches"
  validation {
    condition     = contains(["test", "production"], var.environment)
    error_message = "environment is test or production, not ${var.environment}: the service knows these two."
  }
}

variable "api_key_env" {
  type        = string
  default     = "PUSHFORM_TEST_API_KEY"
  description = "name of the environment variable holding this environment's API key"
}

variable "beta_users" {
  type    = list(string)
  default = ["alice", "bob"]
}

service {
  # The embedded sandbox (it holds a key for each environment) for trying
  # this out; PUSHFORM_BASE_URL, when set, wins and reaches the real service.
  sandbox     = "sandbox.hcl"
  environment = var.environment
  api_key_env = var.api_key_env
}

notification "beta_invite" {
  user_ids = var.beta_users
  title    = "You're invited"
  body     = "Try the new checkout before everyone else."
  tag      = "beta-invite-2026"
}
