# The failure gate: when more than 2% of a stage fails, the rollout stops
# there and the rest of the customers are not sent the spring sale.

run "first_stage_fails" {
  command = apply
  now     = "2030-04-01T09:00:00Z"

  sandbox {
    fail_rate = 0.2 # a bad release: a fifth of the phones reject it
  }

  assert {
    condition     = apply.failed > 0
    error_message = "some of the first stage failed"
  }
}

run "halted" {
  now = "2030-04-01T12:00:00Z" # long after the 30 minutes' wait

  assert {
    condition     = one([for c in plan.changes : c.rollout.state if c.address == "notification.spring_sale"]) == "halted"
    error_message = "the rollout is halted: ${jsonencode([for c in plan.changes : c.rollout if c.address == "notification.spring_sale"])}"
  }
  assert {
    condition     = one([for c in plan.changes : c.targets.send if c.address == "notification.spring_sale"]) == 0
    error_message = "nothing more of the spring sale is sent"
  }
  assert {
    condition     = length([for i in range(500) : i if length([for n in device(format("phone-%03d", i)).inbox : n if n.tag == "spring-sale"]) > 0]) == 40
    error_message = "only the 40 of the first stage whose phones took it have the spring sale"
  }
}
