# opa test policy/ (conftest verify): the policies on plans shaped like
# plan --json's.
package pushform_test

import rego.v1

import data.pushform

change(address, send, rollout, url) := {
	"address": address,
	"action": "create",
	"sends": true,
	"targets": {"send": send},
	"content": {"title": "Sale", "body": "Now", "open_to_url": url, "tag": null, "badge_count": null, "silent_in_foreground": false},
	"rollout": rollout,
}

plan(changes, targets, reach) := {"changes": changes, "summary": {"targets": targets, "reach": reach}}

test_big_audience_without_rollout_denied if {
	msgs := pushform.deny with input as plan([change("notification.big", 60000, null, null)], 60000, null)
	msgs == {"notification.big reaches 60000 people without a rollout"}
}

test_big_audience_with_rollout_passes if {
	count(pushform.deny) == 0 with input as plan([change("notification.big", 60000, {"stages": []}, "https://shop.example.com")], 60000, null)
}

test_http_link_denied if {
	msgs := pushform.deny with input as plan([change("notification.a", 10, null, "http://shop.example.com")], 10, null)
	msgs == {"notification.a opens http://shop.example.com"}
}

test_changes_that_send_nothing_unchecked if {
	held := object.union(change("notification.later", 90000, null, "http://x"), {"action": "wait", "sends": false})
	count(pushform.deny) == 0 with input as plan([held], 0, null)
}

test_new_users_warned if {
	msgs := pushform.warn with input as plan([], 20000, {"users": 20000, "devices": 0, "topics": 0, "new_users": 12000, "already_had": 0})
	msgs == {"this plan reaches 12000 users who never had a push from this state"}
}
