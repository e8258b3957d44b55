#!/usr/bin/env bash
# Renders the pull-request comment of a sample change set (an edit, an
# addition, a rename with moved, a tag change, a forget, an
# already-delivered) as GitHub shows it and screenshots it in headless
# Chromium, into docs/plan-comment.png
# (or $1). With --policies after it, the pull request is planned under the
# policies of scripts/screenshot/policies, one of them overridden: the
# comment with its policy table (docs/plan-comment-policy.png). The markdown is pushform's own (plan --out, then show
# --markdown with GitHub Actions' variables set); the renderer is marked
# with GitHub's alerts and stylesheet, installed from npm into a temporary
# directory. With --personal after it, the pull request adds a
# notification filled in per person (scripts/screenshot/personal), with
# samples = 3: the comment with its samples
# (docs/plan-comment-personal.png). Skipped, exit 0, when Chromium, node
# or npm is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${1:-docs/plan-comment.png}
policy_flags=()
personal=""
if [ "${2:-}" = --personal ]; then
  personal=1
fi
if [ "${2:-}" = --policies ]; then
  policy_flags=(--policy-dir "$root/scripts/screenshot/policies" --override-policy title_fits_lock_screen
    --override-reason "the garden team approved the long title")
fi
case $out in /*) ;; *) out=$root/$out ;; esac

chrome=""
for c in chromium chromium-browser google-chrome google-chrome-stable; do
  if command -v "$c" >/dev/null; then chrome=$(command -v "$c"); break; fi
done
if [ -z "$chrome" ]; then
  echo "screenshot-plan: skipped: no Chromium (apt-get install -y chromium)"
  exit 0
fi
for tool in node npm go; do
  if ! command -v "$tool" >/dev/null; then
    echo "screenshot-plan: skipped: no $tool"
    exit 0
  fi
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The renderer, pinned, outside the repository. Without the registry
# (offline) there is nothing to render with: skipped, as without Chromium.
if ! (cd "$work" && timeout 120 npm install --silent --no-audit --no-fund --no-save --prefix "$work/npm" \
  marked@12.0.2 marked-alert@2.1.2 github-markdown-css@5.9.0 >/dev/null 2>&1); then
  echo "screenshot-plan: skipped: npm could not install the renderer (is the registry reachable?)"
  exit 0
fi

go build -o "$work/pushform" .
campaign=spring-sale
if [ -n "$personal" ]; then campaign=shipping; fi
dir=$work/repo/campaigns/$campaign
mkdir -p "$dir"
pf() { (cd "$work/repo" && PUSHFORM_API_KEY=sandbox-production-key NO_COLOR=1 "$work/pushform" "$@"); }
if [ -n "$personal" ]; then
  # A new campaign, nothing applied before it.
  cp scripts/screenshot/personal/sandbox.hcl scripts/screenshot/personal/users.csv scripts/screenshot/personal/main.hcl "$dir/"
else
  cp scripts/screenshot/sandbox.hcl "$dir/"
  cp scripts/screenshot/before.hcl "$dir/main.hcl"
  # The merged campaign, applied from a plan saved for its time (apply
  # takes no --now in the past; its deliveries are recorded at the real
  # time).
  pf --chdir campaigns/$campaign plan --now 2026-04-20T09:00:00Z --out "$work/before.plan" >/dev/null 2>&1
  pf --chdir campaigns/$campaign apply "$work/before.plan" >/dev/null
  cp scripts/screenshot/after.hcl "$dir/main.hcl"
fi
pf --chdir campaigns/$campaign plan --out "$work/pushform.plan" --now 2026-04-21T09:00:00Z "${policy_flags[@]}" >/dev/null 2>&1
(cd "$work/repo" && GITHUB_SHA=3f9c2e17a4b85d06c1e2f3a4b5c6d7e8f9a0b1c2 GITHUB_SERVER_URL=https://github.com \
  GITHUB_REPOSITORY=acme/campaigns GITHUB_RUN_ID=9123456789 \
  "$work/pushform" --chdir campaigns/$campaign show "$work/pushform.plan" --markdown) |
  sed -e "s#$work#/home/runner/work/_temp#g" -e 's/req-[0-9a-f]\{24\}/req-905e5d925a03774c05891eaf/g' \
    -e 's/delivered on [0-9-]\{10\}/delivered on 2026-04-20/g' > "$work/plan.md" # random request ids; deliveries at the real date

node scripts/screenshot/render.mjs "$work/npm/node_modules" "$work/plan.md" "$work/plan.html"

flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
  --disable-component-update --disable-sync --hide-scrollbars --force-device-scale-factor=1)
# First pass: the page's height (the page writes it in its title).
height=$(timeout 60 "$chrome" "${flags[@]}" --user-data-dir="$(mktemp -d -p "$work")" --window-size=980,2000 \
  --virtual-time-budget=2000 --dump-dom "file://$work/plan.html" 2>/dev/null | sed -n 's/.*<title>height=\([0-9]*\)<\/title>.*/\1/p')
height=${height:-3000}
mkdir -p "$(dirname "$out")"
timeout 60 "$chrome" "${flags[@]}" --user-data-dir="$(mktemp -d -p "$work")" --window-size=980,"$height" \
  --virtual-time-budget=2000 --screenshot="$out" "file://$work/plan.html" 2>/dev/null
cp "$work/plan.md" "${out%.png}.md"
echo "screenshot-plan: wrote $out (980x$height) and ${out%.png}.md"
