# The issue's policies in Rego, for OPA or conftest, over plan --json (the
# document docs/plan-json.schema.json describes: every key present, null
# when absent). pushform's own policy blocks check the same on every plan;
# this is for a team whose guardrails already live in OPA:
#
#   pushform plan --json > plan.json
#   conftest test --policy policy --namespace pushform plan.json
package pushform

import rego.v1

# The changes that send something now: those a policy block's
# for_each_change checks.
sending contains change if {
	some change in input.changes
	change.sends
}

deny contains msg if {
	some change in sending
	change.targets.send > 50000
	change.rollout == null
	msg := sprintf("%s reaches %d people without a rollout", [change.address, change.targets.send])
}

deny contains msg if {
	some change in sending
	url := change.content.open_to_url
	url != null
	not startswith(url, "https://")
	msg := sprintf("%s opens %s", [change.address, url])
}

deny contains msg if {
	input.summary.targets > 2000000
	msg := sprintf("this plan sends %d pushes", [input.summary.targets])
}

warn contains msg if {
	reach := input.summary.reach
	reach != null
	reach.new_users > 10000
	msg := sprintf("this plan reaches %d users who never had a push from this state", [reach.new_users])
}
