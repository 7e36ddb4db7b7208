#!/usr/bin/env bash
# How soon a person sees the model write: ten tickets worked by the real local model
# (scripts/local-model.sh: Qwen2.5-Coder-1.5B on llama.cpp's llama-server, 127.0.0.1), each
# reply streamed into the desk; `support-desk run` prints, from the run's record, the time
# from each model request to its first visible character and to the whole reply, median and
# max. Not in CI: it needs the local model (about 10 minutes on 2 cores once it is built).
#
#   benches/first_character/run.sh             T-0001 … T-0010
#   TICKETS=T-0003,T-0009 benches/first_character/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

tickets="${TICKETS:-T-0001,T-0002,T-0003,T-0004,T-0005,T-0006,T-0007,T-0008,T-0009,T-0010}"
read -r -a model <<<"$(bash scripts/local-model.sh | tail -n 1)"
cargo build --release --locked --quiet
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT

echo "== $(git rev-parse --short HEAD) · $(nproc) cores · load $(cut -d' ' -f1-3 /proc/loadavg)"
# Consent questions are declined: the figures are the model's, not a person's pause.
./target/release/support-desk run --tickets "$tickets" "${model[@]}" \
    --consent decline --data-dir "$data" | grep -E '^(tickets worked|model calls|streamed replies):'
echo "== load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
