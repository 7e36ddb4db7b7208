#!/usr/bin/env bash
# Per tool call, side by side: the desk's client (benches/compare/calls.rs) and the official
# Python SDK (benches/compare/python_calls.py, mcp 2.3.0) against the same server binary,
# each on a fresh database, in one run, as a ratio.
#
#   benches/compare/run.sh                      # 3 rounds of 500 calls each
#   COMPARE_CALLS=2000 COMPARE_ROUNDS=5 benches/compare/run.sh
#
# The venv is benches/compare/.venv (git-ignored); mcp==2.3.0 is installed into it when missing.
set -euo pipefail

cd "$(dirname "$0")/../.."
calls="${COMPARE_CALLS:-500}"
rounds="${COMPARE_ROUNDS:-3}"
venv=benches/compare/.venv

if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(m.version("mcp") != "2.3.0")' 2>/dev/null; then
  "$venv/bin/pip" install --quiet 'mcp==2.3.0'
fi

# The server both clients start, and the Rust client, built before anything is timed.
cargo build --release --locked --bin support-desk
cargo bench --locked --bench compare_calls --no-run
server="$PWD/target/release/support-desk"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "server: $server"
lines=()
for round in $(seq 1 "$rounds"); do
  # Alternate who goes first, so drift on a shared machine does not favour one side.
  for side in $( ((round % 2)) && echo "rust python" || echo "python rust"); do
    db="$scratch/$side-$round.sqlite3"
    if [ "$side" = rust ]; then
      line="$(COMPARE_CALLS="$calls" COMPARE_SERVER="$server" COMPARE_DB="$db" \
        cargo bench --locked --quiet --bench compare_calls 2>/dev/null)"
    else
      line="$(COMPARE_CALLS="$calls" "$venv/bin/python" benches/compare/python_calls.py "$server" "$db" 2>/dev/null)"
    fi
    echo "round $round $side: $line"
    lines+=("$round $side $line")
  done
done

printf '%s\n' "${lines[@]}" > "$scratch/results"
"$venv/bin/python" - "$scratch/results" <<'EOF'
import json, statistics, sys

rows = {}
for raw in open(sys.argv[1]):
    round_, side, line = raw.rstrip("\n").split(" ", 2)
    rows.setdefault(round_, {})[side] = json.loads(line)
servers = {row[side]["server"] for row in rows.values() for side in ("rust", "python")}
assert len(servers) == 1, f"not one server binary: {servers}"
print()
print("round   rust median / p99 (us)   python median / p99 (us)   python/rust: median    p99")
ratios = []
for round_, row in rows.items():
    rust, py = row["rust"], row["python"]
    ratio = py["median_us"] / rust["median_us"]
    ratios.append(ratio)
    print(
        f"{round_:>5}   {rust['median_us']:>10.1f} / {rust['p99_us']:>8.1f}   "
        f"{py['median_us']:>12.1f} / {py['p99_us']:>8.1f}   {ratio:>18.1f}x  {py['p99_us'] / rust['p99_us']:>5.1f}x"
    )
protocols = {row[side]["protocol"] for row in rows.values() for side in ("rust", "python")}
calls = {row[side]["calls"] for row in rows.values() for side in ("rust", "python")}
print(f"protocol revision(s): {', '.join(sorted(protocols))}; timed calls per client per round: {', '.join(map(str, calls))}")
print(f"python/rust ratio of medians, median of {len(ratios)} rounds: {statistics.median(ratios):.1f}x (goal: at least 10x)")
EOF
