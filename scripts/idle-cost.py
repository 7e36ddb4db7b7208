"""The desk's idle cost and memory, measured from outside.

    cargo build --release
    python3 scripts/idle-cost.py [target/release/support-desk]

Starts the binary under a pseudo-terminal three times (the desk on its embedded default,
review mode on the recorded run, the desk with a synthetic 10,000-ticket queue), leaves each
idle for 10 s after it has drawn, and prints the CPU seconds it used while idle and its peak
resident memory (VmHWM). Only this machine and 127.0.0.1 are involved.
"""

import fcntl
import json
import os
import pathlib
import pty
import select
import struct
import sys
import termios
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
IDLE_SECONDS = 10
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def peak_rss_mb(pid: int) -> float:
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def drain(fd: int, seconds: float) -> bytes:
    out = b""
    end = time.time() + seconds
    while time.time() < end:
        ready, _, _ = select.select([fd], [], [], max(0.0, end - time.time()))
        if ready:
            try:
                out += os.read(fd, 65536)
            except OSError:
                break
    return out


def measure(name: str, args: list[str], env: dict[str, str]) -> dict:
    pid, fd = pty.fork()
    if pid == 0:
        # A real window size, as a terminal would set it (120 columns, 40 rows).
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        os.chdir(ROOT)
        os.execvpe(args[0], args, {**os.environ, **env, "TERM": "xterm-256color"})
    drawn = drain(fd, 3.0)  # start-up: servers connect, the first frame is drawn
    before = cpu_seconds(pid)
    drain(fd, IDLE_SECONDS)
    idle_cpu = cpu_seconds(pid) - before
    result = {
        "case": name,
        "idle_seconds": IDLE_SECONDS,
        "cpu_seconds_while_idle": round(idle_cpu, 3),
        "peak_rss_mb": round(peak_rss_mb(pid), 1),
        "drew_a_frame": b"Queue" in drawn or b"Tickets" in drawn,
    }
    os.write(fd, b"q")
    drain(fd, 2.0)
    try:
        os.kill(pid, 9)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)
    return result


def main() -> None:
    binary = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "target/release/support-desk")
    with tempfile.TemporaryDirectory() as scratch:
        scratch = pathlib.Path(scratch)
        env = {"SUPPORT_DESK_DATA_DIR": str(scratch / "data")}
        bundled = json.loads((ROOT / "assets/shop/tickets.json").read_text())
        big = []
        for i in range(10_000):
            ticket = dict(bundled[i % len(bundled)])
            ticket["ticket_id"] = f"T-{i + 1:05d}"
            big.append(ticket)
        (scratch / "tickets.json").write_text(json.dumps(big))
        (scratch / "big.toml").write_text(f'[tickets]\nsource = "{scratch / "tickets.json"}"\n')
        cases = [
            ("desk, embedded default (48 tickets)", [binary]),
            ("review mode, recorded run", [binary, "review", "recordings/ticket-runs"]),
            ("desk, synthetic queue of 10,000 tickets", [binary, "desk", "--config", str(scratch / "big.toml")]),
        ]
        for name, args in cases:
            print(json.dumps(measure(name, args, env)))


if __name__ == "__main__":
    main()
