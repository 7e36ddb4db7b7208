#!/usr/bin/env bash
# How much of each prompt the model server reads again: twelve tickets (T-0013 … T-0024)
# worked by the real local model (scripts/local-model.sh: Qwen2.5-Coder-1.5B on llama.cpp's
# llama-server, 127.0.0.1) on a freshly started server, recorded; `summary` of the recording
# prints the prompt tokens the server read, the share its prompt cache served, the seconds
# reading took and the model's time a ticket, as the server reported them. Not in CI: it needs
# the local model (about 6 to 8 minutes on 2 cores once it is built).
#
#   benches/prompt_cache/run.sh OUT.jsonl            with the desk built from this tree
#   BIN=/path/to/support-desk benches/prompt_cache/run.sh OUT.jsonl
#
# before.jsonl and after.jsonl beside this script are the two runs BENCHMARKS.md reports.
set -euo pipefail
cd "$(dirname "$0")/../.."

out="${1:?usage: benches/prompt_cache/run.sh OUT.jsonl}"
tickets="T-0013,T-0014,T-0015,T-0016,T-0017,T-0018,T-0019,T-0020,T-0021,T-0022,T-0023,T-0024"
if [ -z "${BIN:-}" ]; then
    cargo build --locked --quiet
    BIN=target/debug/support-desk
fi
# A fresh server: its prompt cache starts empty, as in every run this compares.
bash scripts/local-model.sh stop >/dev/null
read -r -a model <<<"$(bash scripts/local-model.sh | tail -n 1)"
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT

echo "== $("$BIN" --version) · $(nproc) cores · load $(cut -d' ' -f1-3 /proc/loadavg)"
# The recording's settings: greedy sampling, every consent approved, every lead's form declined.
"$BIN" run --config config/local-model.toml --tickets "$tickets" "${model[@]}" \
    --consent approve --lead decline --data-dir "$data" --record "$out" >/dev/null
"$BIN" summary "$out" | grep -E '^(tickets worked|model calls|prompts):'
echo "== load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
