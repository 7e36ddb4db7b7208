"""Opens the desk (its terminal UI, under a pseudo-terminal from `script`) on a copy of a
data directory and prints its memory over 30 s (DESK_OPEN_SECONDS to watch it longer), then
quits it with `q`.

    measure.py LABEL BINARY DATA CONFIG MODEL_URL SCRATCH
"""
import os
import re
import shutil
import subprocess
import sys
import time

label, binary, data, config, model, scratch = sys.argv[1:7]
watch = float(os.environ.get("DESK_OPEN_SECONDS", "30"))
slug = re.sub(r"[^A-Za-z0-9]+", "-", label)
copy = f"{scratch}/data-{slug}"
shutil.rmtree(copy, ignore_errors=True)
shutil.copytree(data, copy)
log = f"{scratch}/screen-{slug}.log"
desk = (f"stty rows 40 cols 120; exec {binary} --config {config} --data-dir {copy} "
        f"--model openai:{model}")
started = time.monotonic()
terminal = subprocess.Popen(["script", "-qfc", desk, log], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
pid = None
while pid is None and time.monotonic() - started < 10:
    # The data directory is this desk's own copy: another desk measured at the same time
    # (another run of this script) does not match.
    mine = f"^{re.escape(binary)} --config .* --data-dir {re.escape(copy)} "
    found = subprocess.run(["pgrep", "-f", mine], capture_output=True, text=True).stdout.split()
    pid = found[0] if found else None
    time.sleep(0.05)
if pid is None:
    sys.exit(f"{label}: the desk did not start; see {log}")
samples = []
while time.monotonic() - started < watch:
    try:
        with open(f"/proc/{pid}/status") as status:
            text = status.read()
    except FileNotFoundError:
        break
    field = lambda name: int(re.search(rf"{name}:\s+(\d+)", text).group(1)) / 1024
    samples.append((time.monotonic() - started, field("VmRSS"), field("VmHWM")))
    time.sleep(0.1)
terminal.stdin.write(b"q")
terminal.stdin.flush()
try:
    terminal.wait(timeout=10)
except subprocess.TimeoutExpired:
    terminal.kill()
if not samples:
    sys.exit(f"{label}: the desk exited at once; see {log}")
for at in [1, 2, 5, 10, 20] + [float(t) for t in range(30, int(watch), 30)] + [watch - 0.5]:
    at, rss, hwm = min(samples, key=lambda s: abs(s[0] - at))
    print(f"{label}: at {at:4.1f} s: desk VmRSS {rss:6.1f} MiB, VmHWM {hwm:6.1f} MiB")
screen = open(log, "rb").read().decode("utf-8", "replace")
# The queue's title counts its tickets, "N/N" (the screen log is full of cursor moves).
drew = re.search(r"(?<!\d)(\d{2,})/\1(?!\d)", screen)
print(f"{label}: drew the queue: {drew.group(0) if drew else 'no'} ({len(samples)} samples)")
