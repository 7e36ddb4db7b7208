"""Where each process of one compare run spent its CPU, from
`perf script -F comm,pid,tid,ip,sym,dso`.

    python3 profile.py STACKS RESULT_JSON BINARY...

Frames in BINARY (the Rust client, the server) are named from its own symbol table (`nm`),
because perf cannot read the symbols of these binaries on every machine. A sample counts
once, under the category of the innermost frame that names one; allocation, copies and
generic wrappers are skipped, so their cost goes to whoever called them.
"""

import bisect
import collections
import json
import re
import subprocess
import sys

CATEGORIES = [
    ("decoding messages (serde: rmcp's JsonRpcMessage, untagged ServerResult, buffered Content)",
     ("Deserialize", "serde::private::de", "serde_json::de", "content_clone", "from_slice", "from_str")),
    ("encoding messages (serde_json)", ("Serialize", "serde_json::ser", "format_escaped_str")),
    ("SQLite", ("sqlite3",)),
    ("pipe read and write system calls", ("ksys_read", "ksys_write", "vfs_read", "vfs_write", "do_writev", "pipe_read", "pipe_write")),
    ("epoll and eventfd (Tokio's I/O driver, wakers)", ("epoll", "eventfd")),
    ("thread sleeps and wake-ups (futex, scheduler)", ("futex", "__schedule", "try_to_wake_up", "finish_task_switch")),
    ("other system calls and kernel", ("do_syscall_64", "entry_SYSCALL", "syscall_exit", "[k]")),
    ("Python interpreter", ("_PyEval", "PyObject_", "_PyObject", "PyDict", "_PyFunction")),
    ("tracing (callsites, spans)", ("tracing_core::", "tracing::span", "tracing::__macro_support", "tracing::dispatcher")),
    ("Tokio (scheduler, timers, channels, tasks)", ("tokio::",)),
    ("rmcp (service loop, peer, model, transport)", ("rmcp::",)),
    ("the desk's own code (host::calls, the transport, the shop)", ("support_desk::",)),
    ("the bench's loop", ("compare_calls::",)),
]
SKIP = ("malloc", "_int_free", "cfree", "realloc", "tcache", "__memcpy", "__memmove", "memset",
        "__GI___libc_free", "Instrumented", "drop_in_place", "alloc::", "hashbrown", "core::")


def symbols(binary):
    """Sorted (address, name) of the text symbols of `binary`, and the offset perf's
    addresses have from them (the text segment's address minus its file offset)."""
    table = subprocess.run(["nm", "-C", "--defined-only", "-n", binary], capture_output=True, text=True).stdout
    addrs, names = [], []
    for line in table.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] in "tTwW":
            addrs.append(int(parts[0], 16))
            names.append(parts[2])
    segments = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True).stdout
    shift = 0
    for line in segments.splitlines():
        fields = line.split()
        if fields[:1] == ["LOAD"] and "E" in fields[6:-1]:
            shift = int(fields[2], 16) - int(fields[1], 16)
    return addrs, names, shift


def main():
    stacks, result, binaries = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3:]
    tables = {b.rsplit("/", 1)[-1]: symbols(b) for b in binaries}
    samples, current = [], None
    for text in open(stacks):
        if text and not text[0].isspace():
            match = re.match(r"\s*(\S.*?)\s+(\d+)/(\d+)", text)
            current = {"pid": int(match.group(2)), "frames": []}
            samples.append(current)
            continue
        match = re.match(r"\s*([0-9a-f]+)\s+(.*?)\s+\((.*)\)$", text)
        if not match or current is None:
            continue
        ip, sym, dso = match.groups()
        table = tables.get(dso.rsplit("/", 1)[-1])
        if table and (sym == "[unknown]" or not sym):
            addrs, names, shift = table
            at = bisect.bisect_right(addrs, int(ip, 16) + shift) - 1
            sym = names[at] if at >= 0 else sym
        current["frames"].append(sym)
    for role in ("client", "server"):
        pid = result[f"{role}_pid"]
        mine = [s for s in samples if s["pid"] == pid]
        counts = collections.Counter()
        for sample in mine:
            counts[category(sample["frames"])] += 1
        share = 100 * len(mine) / max(1, len(samples))
        print(f"  {role} (pid {pid}): {share:.0f}% of the samples; {result[f'{role}_cpu_us_per_call']} us CPU per call")
        for name, n in counts.most_common():
            print(f"    {100 * n / max(1, len(mine)):5.1f}%  {name}")


def category(frames):
    for frame in frames:
        if any(s in frame for s in SKIP) and not frame.startswith("<serde") and "serde" not in frame:
            continue
        for name, needles in CATEGORIES:
            if any(n in frame for n in needles):
                return name
    return "other (allocation or std with no named caller, startup)"


main()
