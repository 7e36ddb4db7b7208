#!/usr/bin/env bash
# The desk's MCP client against the official conformance suite, for both protocol revisions
# the desk speaks.
#
# Builds desk-conformance (the host's own client code, run headless), runs the suite's client
# scenarios through npx, with Node 22 from the npm registry's `node` package (the suite needs
# Node >= 22), and compares every scenario with the committed baseline of expected failures in
# tests/conformance/. Exits non-zero on an unexpected failure, on a baseline entry that now
# passes, or when a suite could not run at all.
#
#   scripts/conformance.sh            # both revisions
#   scripts/conformance.sh 2026-07-28 # one of them
#
# Needs the npm registry (npx fetches the pinned packages once, into ~/.npm) and loopback
# networking only: the suite's mock servers listen on localhost. Results land in
# target/conformance/<revision>/ (the suite's log and one checks.json per scenario). The
# suite runs its scenarios all at once; the few that time the client run again on their own
# (TIMED_SCENARIOS below).
set -euo pipefail
cd "$(dirname "$0")/.."

NODE_PACKAGE="node@22"
SUITE_2025="@modelcontextprotocol/conformance@0.1.16"
SUITE_2026="@modelcontextprotocol/conformance@0.2.0-alpha.12"

revisions=("$@")
[ ${#revisions[@]} -gt 0 ] || revisions=(2025-11-25 2026-07-28)
for revision in "${revisions[@]}"; do
    case "$revision" in
    2025-11-25 | 2026-07-28) ;;
    *)
        echo "unknown revision $revision; use 2025-11-25 or 2026-07-28" >&2
        exit 2
        ;;
    esac
done

for tool in cargo npx python3; do
    command -v "$tool" >/dev/null || {
        echo "conformance.sh needs $tool on PATH" >&2
        exit 2
    }
done

# DESK_CONFORMANCE_PROFILE=dev reuses the debug build `cargo test` leaves behind, instead of
# building everything again with optimizations (the longest part of a run from a clean clone).
profile="${DESK_CONFORMANCE_PROFILE:-release}"
case "$profile" in
release) profile_dir=release ;;
dev) profile_dir=debug ;;
*)
    echo "DESK_CONFORMANCE_PROFILE must be release or dev, not $profile" >&2
    exit 2
    ;;
esac
echo "== cargo build --profile $profile --bin desk-conformance"
cargo build --profile "$profile" --bin desk-conformance --locked
target_dir="${CARGO_TARGET_DIR:-target}"
binary="$(cd "$target_dir/$profile_dir" && pwd)/desk-conformance"
# The suite splits --command on spaces before it appends the server's URL.
case "$binary" in
*" "*)
    echo "the binary's path has a space ($binary); the suite cannot run it. Set CARGO_TARGET_DIR to a path without one." >&2
    exit 2
    ;;
esac
out_root="$(cd "$target_dir" && pwd)/conformance"

# Runs one suite; the suite's own exit code only says whether anything failed, so the
# verdict comes from compare() below.
run_suite() {
    local revision=$1 package=$2
    shift 2
    local out="$out_root/$revision"
    rm -rf "$out"
    mkdir -p "$out"
    echo "== $package: conformance client $* (revision $revision)"
    (
        # The suite writes results/ relative to the current directory unless told otherwise.
        cd "$out"
        npx --yes -p "$NODE_PACKAGE" -p "$package" -- conformance client \
            --command "$binary" --output-dir "$out/results" "$@" >"$out/suite.log" 2>&1
    ) || true
    if ! grep -q "=== SUITE SUMMARY ===" "$out/suite.log"; then
        echo "the $revision suite did not run to its summary; the end of its log:" >&2
        tail -n 30 "$out/suite.log" >&2
        return 1
    fi
}

# Scenarios whose checks time the client: sse-retry wants the reconnection `retry` ms after
# the server closed the stream, no more than 200 ms late. The suite runs every scenario at
# once, so on two cores that check times the machine (eighteen clients starting and one
# Node event loop serving them all). Each of these runs again on its own after its suite,
# and that run's checks replace the crowded one's.
TIMED_SCENARIOS=(sse-retry)

# Runs one scenario of a revision's suite again, alone, when the suite ran it at all.
run_alone() {
    local revision=$1 package=$2 scenario=$3
    local out="$out_root/$revision"
    grep -qE "^[✓✗] $scenario: " "$out/suite.log" || return 0
    rm -rf "$out/results/$scenario"-[0-9]*
    echo "== $package: conformance client --scenario $scenario, on its own (revision $revision)"
    (
        cd "$out"
        npx --yes -p "$NODE_PACKAGE" -p "$package" -- conformance client \
            --command "$binary" --output-dir "$out/results" --scenario "$scenario" \
            >"$out/alone-$scenario.log" 2>&1
    ) || true
    if ! compgen -G "$out/results/$scenario-[0-9]*/checks.json" >/dev/null; then
        echo "$scenario did not run on its own; the end of its log:" >&2
        tail -n 30 "$out/alone-$scenario.log" >&2
        return 1
    fi
}

status=0
for revision in "${revisions[@]}"; do
    case "$revision" in
    2025-11-25) package=$SUITE_2025 && run_suite "$revision" "$package" --suite all --spec-version 2025-11-25 || status=1 ;;
    2026-07-28) package=$SUITE_2026 && run_suite "$revision" "$package" --requirements 2026-07-28 || status=1 ;;
    esac
    for scenario in "${TIMED_SCENARIOS[@]}"; do
        run_alone "$revision" "$package" "$scenario" || status=1
    done
done
[ "$status" -eq 0 ] || exit "$status"

python3 - "$out_root" tests/conformance "${revisions[@]}" <<'PY' || status=1
"""Compares the suite's results with the baselines; prints a summary per revision.

A scenario passes when it has at least one SUCCESS check and no FAILURE or WARNING check
(the suite's own summary also passes a scenario that produced no checks at all). Baseline
entries are `scenario` (the whole scenario is expected to fail) or `scenario:check-id` (that
check may fail, every other must pass); each must end with a `# reason` comment.
"""
import json
import pathlib
import re
import sys

out_root, baseline_dir, revisions = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3:]
BAD = {"FAILURE", "WARNING"}
SEVERITY = {"FAILURE": 3, "WARNING": 2, "SUCCESS": 1, "INFO": 1, "SKIPPED": 0}


def read_baseline(path):
    """The `client:` list of a baseline: {entry: reason}. Refuses entries without a reason."""
    entries, problems, in_client = {}, [], False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if re.match(r"^\S", line):
            in_client = line.split("#")[0].strip() == "client:"
            continue
        match = re.match(r"^\s+-\s+([^\s#]+)\s*(?:#\s*(.*))?$", line)
        if not in_client or not match:
            continue
        entry, reason = match.group(1), (match.group(2) or "").strip()
        if not reason:
            problems.append(f"{path}:{number}: '{entry}' says no reason; end the line with '# why'")
        entries[entry] = reason
    return entries, problems


def scenarios_run(log):
    """Scenario names from the suite's summary lines, in order."""
    names = []
    for line in log.splitlines():
        match = re.match(r"^(?:[✓✗] (\S+): \d+ passed|- (\S+): skipped)", line)
        if match:
            names.append(match.group(1) or match.group(2))
    return names


def read_results(results):
    """{scenario: [checks]} from results/<scenario>-<timestamp>/checks.json."""
    checks = {}
    for path in sorted(results.rglob("checks.json")):
        relative = path.parent.relative_to(results).as_posix()
        scenario = re.sub(r"-\d{4}-\d{2}-\d{2}T[\d-]+Z$", "", relative)
        checks[scenario] = json.loads(path.read_text(encoding="utf-8"))
    return checks


def verdicts(checks):
    """One status per check id, the most severe of its occurrences."""
    by_id = {}
    for check in checks:
        status = check.get("status", "FAILURE")
        if check["id"] not in by_id or SEVERITY.get(status, 3) >= SEVERITY.get(by_id[check["id"]], 3):
            by_id[check["id"]] = status
    return by_id


def compare(revision):
    out = out_root / revision
    baseline, problems = read_baseline(baseline_dir / f"baseline-{revision}.yml")
    names = scenarios_run((out / "suite.log").read_text(encoding="utf-8"))
    results = read_results(out / "results")
    whole = {e for e in baseline if ":" not in e}
    per_check = {}
    for entry in baseline:
        if ":" in entry:
            scenario, check = entry.split(":", 1)
            per_check.setdefault(scenario, set()).add(check)
    lines, unexpected, stale = [], [], []
    passed = failed = expected = 0
    counts = {"SUCCESS": 0, "FAILURE": 0, "WARNING": 0}
    for name in names:
        checks = results.get(name)
        if checks is None:
            lines.append(f"  ✗ {name}: no checks.json (the scenario did not run)")
            unexpected.append(name)
            failed += 1
            continue
        mine = {status: sum(c.get("status") == status for c in checks) for status in counts}
        for status, n in mine.items():
            counts[status] += n
        by_id = verdicts(checks)
        bad = sorted(i for i, s in by_id.items() if s in BAD)
        fails = bool(bad) or "SUCCESS" not in by_id.values()
        passed, failed = passed + (not fails), failed + fails
        tally = f"checks {mine['SUCCESS']} passed, {mine['FAILURE']} failed"
        tally += f", {mine['WARNING']} warned" if mine["WARNING"] else ""
        if name in whole:
            if fails:
                expected += 1
                lines.append(f"  ~ {name}: {tally}; expected: {baseline[name]}")
            else:
                stale.append(name)
                lines.append(f"  ! {name}: passes now; delete it from the baseline")
            continue
        allowed = per_check.get(name, set())
        surprises = [i for i in bad if i not in allowed]
        if not bad and "SUCCESS" not in by_id.values():
            surprises = ["(no successful check)"]
        now_passing = [c for c in allowed if by_id.get(c) == "SUCCESS"]
        stale += [f"{name}:{c}" for c in now_passing]
        unexpected += [f"{name}:{c}" for c in surprises]
        if surprises:
            lines.append(f"  ✗ {name}: {tally}; unexpected: {', '.join(surprises)}")
        elif bad:
            expected += 1
            why = "; ".join(baseline[f"{name}:{c}"] for c in bad)
            lines.append(f"  ~ {name}: {tally}; expected: {why}")
        else:
            lines.append(f"  ✓ {name}: {tally}")
        for check in now_passing:
            lines.append(f"  ! {name}:{check} passes now; delete it from the baseline")
    for entry in baseline:
        if entry.split(":", 1)[0] not in names:
            stale.append(entry)
            lines.append(f"  ! {entry}: listed, but the suite did not run it; delete it from the baseline")
    print(f"== {revision}")
    print("\n".join(lines))
    print(
        f"{revision}: {len(names)} scenarios, {passed} pass, {failed} fail "
        f"({expected} expected, {len(unexpected)} unexpected), {len(stale)} stale baseline entries; "
        f"checks: {counts['SUCCESS']} succeeded, {counts['FAILURE']} failed, {counts['WARNING']} warned"
    )
    for problem in problems:
        print(f"  ! {problem}")
    return not (unexpected or stale or problems)


ok = all([compare(revision) for revision in revisions])
print("conformance: as the baselines expect" if ok else "conformance: NOT as the baselines expect")
sys.exit(0 if ok else 1)
PY
exit "$status"
