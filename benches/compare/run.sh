#!/usr/bin/env bash
# Per tool call, side by side: the desk's client (benches/compare/calls.rs) and the official
# Python SDK (benches/compare/python_calls.py, mcp 2.3.0) against the same server binary,
# each on a fresh database, in one run, as a ratio. A third client with no MCP library at
# all (calls.rs with COMPARE_CLIENT=floor) shows what the server and the pipes alone cost.
#
#   benches/compare/run.sh                          # 5 rounds of 500 calls per client (rust: the
#                                                   # desk's client on the desk's own runtime;
#                                                   # rust_mt: the same on a multi-thread runtime;
#                                                   # rmcp: rmcp's bare call_tool_once through
#                                                   # its service loop, on the desk's runtime)
#   COMPARE_CALLS=2000 COMPARE_ROUNDS=5 benches/compare/run.sh
#   COMPARE_BUSY_POLL_US=0 benches/compare/run.sh   # every server, and the desk's client, sleep
#                                                   # as soon as they wait (src/busy_poll.rs)
#   benches/compare/run.sh profile                  # where each process's CPU goes (perf)
#   benches/compare/run.sh placed                   # the same clients with the CPUs fixed: each
#                                                   # client and its server pinned to one CPU,
#                                                   # then client on CPU 0 and server on CPU 1
#                                                   # (taskset); ratios per placement
#   benches/compare/run.sh switches                 # who gives up the CPU on one CPU: the floor's
#                                                   # and the desk's client pinned with their server
#                                                   # to CPU 0, each thread's voluntary/involuntary
#                                                   # context switches over 2 s of calls
#   benches/compare/run.sh server                   # what the server's cost per call follows:
#                                                   # the floor as is, with the desk's request
#                                                   # lines, pausing 20 us between calls, and the
#                                                   # desk's client, 5 rounds of 1,000 calls
#
# The venv is benches/compare/.venv (git-ignored); mcp==2.3.0 is installed into it when missing.
set -euo pipefail

cd "$(dirname "$0")/../.."
mode="${1:-compare}"
case $mode in
  compare) ;;
  profile) command -v perf > /dev/null || { echo "profile needs perf (linux-tools)"; exit 1; } ;;
  server) ;;
  placed|switches) command -v taskset > /dev/null || { echo "$mode needs taskset (util-linux)"; exit 1; } ;;
  *) echo "usage: $0 [profile|placed|server|switches]"; exit 2 ;;
esac
calls="${COMPARE_CALLS:-500}"
rounds="${COMPARE_ROUNDS:-5}"
venv=benches/compare/.venv

if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(m.version("mcp") != "2.3.0")' 2>/dev/null; then
  "$venv/bin/pip" install --quiet 'mcp==2.3.0'
fi

# One build, on the whole-program `dist` profile, gives both the server binary
# (target/dist/support-desk, which the bench needs) and the Rust client; both are copied
# aside, so a rebuild of the shared target directory during the run cannot swap either.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
cargo bench --locked --profile dist --bench compare_calls --no-run 2> "$scratch/build.log" || { cat "$scratch/build.log"; exit 1; }
client="$(sed -n 's/.*Executable .*(\(.*\))$/\1/p' "$scratch/build.log")"
cp "${CARGO_TARGET_DIR:-target}/dist/support-desk" "$scratch/support-desk"
cp "$client" "$scratch/compare_calls"
server="$scratch/support-desk"

# The command of one client: `side_command SIDE SERVER DB CALLS` sets `cmd` to the client
# SIDE making CALLS timed calls on a server started as SERVER with its database at DB.
side_command() {
  local side=$1 on=$2 db=$3 n=$4
  local knobs=(COMPARE_CALLS="$n" COMPARE_SERVER="$on" COMPARE_DB="$db")
  case $side in
    rust) cmd=(env "${knobs[@]}" "$scratch/compare_calls") ;;
    rust_mt) cmd=(env COMPARE_RUNTIME=multi_thread "${knobs[@]}" "$scratch/compare_calls") ;;
    rmcp) cmd=(env COMPARE_CLIENT=rmcp "${knobs[@]}" "$scratch/compare_calls") ;;
    floor) cmd=(env COMPARE_CLIENT=floor "${knobs[@]}" "$scratch/compare_calls") ;;
    python) cmd=(env COMPARE_CALLS="$n" "$venv/bin/python" benches/compare/python_calls.py "$on" "$db") ;;
  esac
}

# One timed run: `run_side SIDE SERVER FILE LABEL [LAUNCHER...]` runs client SIDE (on a
# fresh database) against SERVER, started under LAUNCHER if one is given, prints its JSON
# line after "round LABEL:", and appends "LABEL line" to FILE.
run_side() {
  local side=$1 on=$2 file=$3 label=$4 line
  shift 4
  side_command "$side" "$on" "$scratch/${label// /-}.sqlite3" "$calls"
  line="$("$@" "${cmd[@]}" 2>/dev/null)"
  echo "round $label: $line"
  echo "$label $line" >> "$file"
}

if [ "$mode" = profile ]; then
  # Each client once under perf (which follows the server it starts), then each process's
  # samples sorted into what they were doing (benches/compare/profile.py: stacks unwound
  # from DWARF, each sample under the innermost frame that names a category).
  profile_calls="${COMPARE_CALLS:-3000}"
  for side in rust rust_mt rmcp floor python; do
    db="$scratch/profile-$side.sqlite3"
    side_command "$side" "$server" "$db" "$profile_calls"
    line="$(perf record -q -F 4000 --call-graph dwarf,32768 -o "$scratch/$side.perf" -- "${cmd[@]}" 2>/dev/null)"
    perf script -i "$scratch/$side.perf" -F comm,pid,tid,ip,sym,dso 2>/dev/null > "$scratch/$side.stacks"
    echo "$side: $line"
    "$venv/bin/python" benches/compare/profile.py "$scratch/$side.stacks" "$line" "$scratch/compare_calls" "$server"
  done
  exit 0
fi

if [ "$mode" = placed ]; then
  # Where the scheduler puts a server beside its client decides most of a call's time on this
  # machine (BENCHMARKS.md, 'Tool call against the Python SDK and the floor'), and it decides anew for every process. Here it is
  # fixed: "one" pins the client and its server (which inherits the mask) to CPU 0, "two"
  # pins the client to CPU 0 and its server to CPU 1.
  printf '#!/bin/sh\nexec taskset -c 1 "%s" "$@"\n' "$server" > "$scratch/server-on-cpu1"
  chmod +x "$scratch/server-on-cpu1"
  echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  : > "$scratch/placed"
  for round in $(seq 1 "$rounds"); do
    case $((round % 3)) in
      1) order="rust python floor" ;;
      2) order="python floor rust" ;;
      0) order="floor rust python" ;;
    esac
    for placement in one two; do
      case $placement in
        one) on="$server" ;;
        two) on="$scratch/server-on-cpu1" ;;
      esac
      for side in $order; do
        run_side "$side" "$on" "$scratch/placed" "$round $placement $side" taskset -c 0
      done
    done
  done
  echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
  "$venv/bin/python" - "$scratch/placed" <<'EOF'
import json, statistics, sys

rows = {}
for raw in open(sys.argv[1]):
    round_, placement, side, line = raw.rstrip("\n").split(" ", 3)
    rows.setdefault(placement, {}).setdefault(round_, {})[side] = json.loads(line)
sides = ("rust", "python", "floor")
for placement, label in (("one", "client and server on CPU 0"), ("two", "client on CPU 0, server on CPU 1")):
    print()
    print(f"{label}: wall per call, us (median / p99), then CPU per call, us (client + server)")
    print("round  rust            python          floor              rust           python         floor")
    for round_, row in rows[placement].items():
        wall = "  ".join(f"{row[s]['median_us']:>6.1f} /{row[s]['p99_us']:>7.1f}" for s in sides)
        cpu = "  ".join(f"{row[s]['client_cpu_us_per_call']:>5.1f} +{row[s]['server_cpu_us_per_call']:>6.1f}" for s in sides)
        print(f"{round_:>5}  {wall}    {cpu}")

    def show(name, top, bottom, goal=""):
        ratios = [row[top]["median_us"] / row[bottom]["median_us"] for row in rows[placement].values()]
        print(f"{placement}: {name:<26} {'  '.join(f'{r:.2f}x' for r in ratios)}  -> median {statistics.median(ratios):.2f}x{goal}")

    show("python/rust, wall median", "python", "rust", " (goal: at least 10x)")
    show("python/floor, wall median", "python", "floor")
    show("rust/floor, wall median", "rust", "floor", " (goal: within 1.3x)")
    client = [row["rust"]["client_cpu_us_per_call"] for row in rows[placement].values()]
    server = [row["rust"]["server_cpu_us_per_call"] for row in rows[placement].values()]
    print(f"{placement}: rust's client CPU per call median {statistics.median(client):.1f} us (goal: 15 us), server CPU per call median {statistics.median(server):.1f} us (goal: 25 us)")
EOF
  exit 0
fi

if [ "$mode" = switches ]; then
  # Each thread's context switches (voluntary/involuntary, from /proc/PID/task/*/status)
  # sampled 1 s into a long run and 2 s later: a switch per call under "involuntary" is a
  # thread taken off the CPU while it still had work, here by the peer its write woke.
  threads() {
    for task in /proc/"$1"/task/*; do
      printf '%s:%s ' "$(cat "$task/comm")" \
        "$(awk '/^voluntary_ctxt/ {v = $2} /^nonvoluntary_ctxt/ {n = $2} END {print v "/" n}' "$task/status")"
    done
  }
  echo "load average $(cut -d' ' -f1-3 /proc/loadavg); client and server on CPU 0, 150,000 calls each"
  for side in floor desk floor desk; do
    COMPARE_CLIENT=$side COMPARE_CALLS=150000 COMPARE_SERVER="$server" COMPARE_DB="$scratch/switches-$side.sqlite3" \
      taskset -c 0 "$scratch/compare_calls" > "$scratch/switches.json" 2>/dev/null &
    client_pid=$!
    sleep 1
    server_pid=$(pgrep -P "$client_pid" | head -1)
    before_server=$(threads "$server_pid") before_client=$(threads "$client_pid")
    sleep 2
    after_server=$(threads "$server_pid") after_client=$(threads "$client_pid")
    wait "$client_pid"
    echo "$side server threads: $before_server-> $after_server"
    echo "$side client threads: $before_client-> $after_client"
    "$venv/bin/python" -c 'import json, sys; d = json.load(open(sys.argv[1])); print("%s: median %.1f us, CPU per call %.1f us client + %.1f us server" % (sys.argv[2], d["median_us"], d["client_cpu_us_per_call"], d["server_cpu_us_per_call"]))' "$scratch/switches.json" "$side"
  done
  exit 0
fi

if [ "$mode" = server ]; then
  echo "load average $(cut -d' ' -f1-3 /proc/loadavg); each line: wall median us, client CPU us, server CPU us per call"
  for round in $(seq 1 "$rounds"); do
    for side in floor floor_desk_lines floor_paused desk; do
      case $side in
        floor) knobs=(COMPARE_CLIENT=floor) ;;
        floor_desk_lines) knobs=(COMPARE_CLIENT=floor COMPARE_FLOOR_LINES=desk) ;;
        floor_paused) knobs=(COMPARE_CLIENT=floor COMPARE_FLOOR_PAUSE_US=20) ;;
        desk) knobs=() ;;
      esac
      env "${knobs[@]}" COMPARE_CALLS="${COMPARE_CALLS:-1000}" COMPARE_SERVER="$server" COMPARE_DB="$scratch/$side-$round.sqlite3" "$scratch/compare_calls" 2>/dev/null \
        | "$venv/bin/python" -c 'import json, sys; d = json.load(sys.stdin); print("round %s %-17s %6.1f %6.1f %6.1f" % (sys.argv[1], sys.argv[2], d["median_us"], d["client_cpu_us_per_call"], d["server_cpu_us_per_call"]))' "$round" "$side"
    done
  done
  echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
  exit 0
fi

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "server: target/dist/support-desk, copied to $server"
: > "$scratch/results"
for round in $(seq 1 "$rounds"); do
  # Rotate who goes first, so drift on a shared machine does not favour one side.
  case $((round % 3)) in
    1) order="rust python floor rust_mt rmcp" ;;
    2) order="python floor rmcp rust_mt rust" ;;
    0) order="floor rmcp rust_mt rust python" ;;
  esac
  for side in $order; do
    run_side "$side" "$server" "$scratch/results" "$round $side"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

"$venv/bin/python" - "$scratch/results" <<'EOF'
import json, statistics, sys

rows = {}
for raw in open(sys.argv[1]):
    round_, side, line = raw.rstrip("\n").split(" ", 2)
    rows.setdefault(round_, {})[side] = json.loads(line)
sides = ("rust", "python", "floor", "rust_mt")
servers = {row[side]["server"] for row in rows.values() for side in sides + ("rmcp",)}
assert len(servers) == 1, f"not one server binary: {servers}"
protocols = {row[side]["protocol"] for row in rows.values() for side in sides}
calls = {row[side]["calls"] for row in rows.values() for side in sides}

def ratio(key):
    return [row["python"][key] / row["rust"][key] for row in rows.values()]

print()
print("wall time per call, us (median / p99)                      CPU per call, us (client + server)")
print("round  rust            python          floor           rust_mt         rust           python         floor          rust_mt")
for round_, row in rows.items():
    wall = "  ".join(f"{row[s]['median_us']:>6.1f} /{row[s]['p99_us']:>7.1f}" for s in sides)
    cpu = "  ".join(f"{row[s]['client_cpu_us_per_call']:>5.1f} +{row[s]['server_cpu_us_per_call']:>6.1f}" for s in sides)
    print(f"{round_:>5}  {wall}    {cpu}")
print()
print(f"protocol revision: {', '.join(sorted(protocols))}; timed calls per client per round: {', '.join(map(str, calls))}")
median_ratios = ratio("median_us")
print(f"python/rust, wall median:   {'  '.join(f'{r:.1f}x' for r in median_ratios)}  -> median {statistics.median(median_ratios):.1f}x (goal: at least 10x)")
p99_ratios = ratio("p99_us")
print(f"python/rust, wall p99:      {'  '.join(f'{r:.1f}x' for r in p99_ratios)}  -> median {statistics.median(p99_ratios):.1f}x")
cpu_ratios = ratio("client_cpu_us_per_call")
print(f"python/rust, client CPU:    {'  '.join(f'{r:.1f}x' for r in cpu_ratios)}  -> median {statistics.median(cpu_ratios):.1f}x")
floor_ratios = [row["python"]["median_us"] / row["floor"]["median_us"] for row in rows.values()]
print(f"python/floor, wall median:  {'  '.join(f'{r:.1f}x' for r in floor_ratios)}  -> median {statistics.median(floor_ratios):.1f}x (floor: a client with no MCP library)")
mt_ratios = [row["python"]["median_us"] / row["rust_mt"]["median_us"] for row in rows.values()]
print(f"python/rust_mt, wall median: {'  '.join(f'{r:.1f}x' for r in mt_ratios)}  -> median {statistics.median(mt_ratios):.1f}x (rust_mt: the desk's client on a multi-thread runtime)")
for side in ("rust", "rust_mt", "rmcp"):
    near = [row[side]["median_us"] / row["floor"]["median_us"] for row in rows.values()]
    print(f"{side}/floor, wall median: {'  '.join(f'{r:.2f}x' for r in near)}  -> median {statistics.median(near):.2f}x (goal: within 1.3x)")
for side in ("rust", "rust_mt", "rmcp", "floor"):
    server = [row[side]["server_cpu_us_per_call"] for row in rows.values()]
    client = [row[side]["client_cpu_us_per_call"] for row in rows.values()]
    print(f"{side}: server CPU per call median {statistics.median(server):.1f} us (goal: 25 us), client CPU per call median {statistics.median(client):.1f} us (goal: 15 us)")
EOF
