#!/usr/bin/env bash
# The desk opened on a day's record: how much memory it holds once it has drawn the queue.
#
# Works a queue of 10,000 tickets (the bundled 48, repeated under new IDs) headless with
# `support-desk run` against a local mock model (benches/desk_open/mock_model.py), so the
# record holds a day's events; then opens the desk, its terminal UI under a pseudo-terminal
# from `script`, on a copy of that record and on an empty one, and prints its VmRSS and
# VmHWM over 30 s (benches/desk_open/measure.py). The difference between the two is what
# the record costs the desk. DESK_OPEN_SECONDS=300 watches each desk for five minutes instead.
#
#   benches/desk_open/run.sh                  # the debug build of this checkout
#   benches/desk_open/run.sh BIN [BIN ...]    # these support-desk binaries, each on the same
#                                             # record (the first one works the queue)
#
# Memory, not time, is measured, so the debug build will do (minutes to build, where the
# release build takes a quarter of an hour); its own code adds about 80 MiB to every figure,
# the empty record's included. Needs python3 and `script` (util-linux); loopback only.
set -euo pipefail
cd "$(dirname "$0")/../.."

binaries=("$@")
if [ ${#binaries[@]} -eq 0 ]; then
    cargo build --locked --bin support-desk
    binaries=("$(cd "${CARGO_TARGET_DIR:-target}/debug" && pwd)/support-desk")
fi
for tool in python3 script pgrep; do
    command -v "$tool" >/dev/null || { echo "desk_open needs $tool" >&2; exit 2; }
done

scratch="$(mktemp -d)"
model_pid=""
trap '[ -n "$model_pid" ] && kill "$model_pid" 2>/dev/null; rm -rf "$scratch"' EXIT

python3 - "$scratch" <<'PY'
import json, sys
scratch = sys.argv[1]
bundled = json.load(open("assets/shop/tickets.json"))
queue = [dict(bundled[i % len(bundled)], ticket_id=f"T-{i + 1:05}") for i in range(10000)]
json.dump(queue, open(f"{scratch}/tickets.json", "w"))
open(f"{scratch}/queue.toml", "w").write(f'[tickets]\nsource = "{scratch}/tickets.json"\n')
PY

port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
python3 benches/desk_open/mock_model.py "$port" &
model_pid=$!
model="http://127.0.0.1:$port/v1"
for _ in $(seq 50); do
    python3 -c "import urllib.request; urllib.request.urlopen('$model/models')" 2>/dev/null && break
    sleep 0.1
done

echo "# $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== the day: support-desk run on 10,000 tickets, concurrency 32 (${binaries[0]})"
started=$SECONDS
"${binaries[0]}" run --json --config "$scratch/queue.toml" --data-dir "$scratch/day" \
    --model "openai:$model" --concurrency 32 > "$scratch/summary.json" 2> "$scratch/run.log"
python3 - "$scratch/summary.json" "$((SECONDS - started))" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
print(f"tickets_worked {summary['tickets_worked']}, model_calls {summary['model_calls']}, "
      f"tool_calls {summary['tool_calls']}, errors {summary['errors']} in {sys.argv[2]} s")
PY
mkdir -p "$scratch/empty"
for binary in "${binaries[@]}"; do
    name="$(basename "$binary")"
    echo "== $binary"
    python3 benches/desk_open/measure.py "$name, a day's record" "$binary" "$scratch/day" \
        "$scratch/queue.toml" "$model" "$scratch"
    python3 benches/desk_open/measure.py "$name, an empty record" "$binary" "$scratch/empty" \
        "$scratch/queue.toml" "$model" "$scratch"
done
echo "# $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
