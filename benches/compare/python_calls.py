"""The same N tool calls as benches/compare/calls.rs, made by the official Python SDK (mcp 2.3.0).

    python benches/compare/python_calls.py target/release/support-desk /tmp/fresh.sqlite3

Starts `support-desk serve shop --stdio --db DB` (DB is created and seeded when new; with
`--busy-poll-us N` when COMPARE_BUSY_POLL_US is set, as calls.rs starts it), lists the
tools, makes WARMUP untimed `get_order_status` calls, then COMPARE_CALLS (default 500) timed
ones, and prints one JSON line: median and p99 in microseconds, nearest-rank, the same
definition calls.rs uses, and the CPU time per call of this process and of the server, from
/proc/<pid>/task/*/schedstat as calls.rs reads it. Each timed span is one
`await client.call_tool(...)`, start to end.
"""

import asyncio
import json
import math
import os
import sys
import time
from importlib.metadata import version

from mcp import Client, StdioServerParameters

WARMUP = 10
TOOL = "get_order_status"
ARGUMENTS = {"order_id": "O-1744"}


def cpu_time_ns(pid: int) -> int:
    """Time on a CPU of every thread of a process so far."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/schedstat") as schedstat:
            total += int(schedstat.read().split()[0])
    return total


def only_child() -> int:
    """The server: the one child process of this one."""
    children = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as stat:
                after_comm = stat.read().rsplit(")", 1)[1]
        except OSError:
            continue
        if int(after_comm.split()[1]) == os.getpid():
            children.append(int(name))
    if len(children) != 1:
        raise SystemExit(f"expected one server process, found children {children}")
    return children[0]


def nearest_rank(sorted_values: list[int], fraction: float) -> int:
    return sorted_values[max(0, math.ceil(fraction * len(sorted_values)) - 1)]


async def main(binary: str, db: str, calls: int) -> None:
    args = ["serve", "shop", "--stdio", "--db", db]
    if "COMPARE_BUSY_POLL_US" in os.environ:
        args += ["--busy-poll-us", os.environ["COMPARE_BUSY_POLL_US"]]
    server = StdioServerParameters(command=binary, args=args)
    async with Client(server) as client:
        await client.list_tools()
        for _ in range(WARMUP):
            await client.call_tool(TOOL, ARGUMENTS)
        child = only_child()
        client_before, server_before = cpu_time_ns(os.getpid()), cpu_time_ns(child)
        spans_ns = []
        for _ in range(calls):
            started = time.perf_counter_ns()
            result = await client.call_tool(TOOL, ARGUMENTS)
            spans_ns.append(time.perf_counter_ns() - started)
            if result.is_error:
                raise SystemExit(f"{TOOL} failed: {result.content}")
        client_cpu_ns = cpu_time_ns(os.getpid()) - client_before
        server_cpu_ns = cpu_time_ns(child) - server_before
        protocol = client.protocol_version
    spans_ns.sort()
    print(
        json.dumps(
            {
                "client": f"python mcp {version('mcp')}",
                "server": binary,
                "protocol": protocol,
                "calls": calls,
                "median_us": round(nearest_rank(spans_ns, 0.50) / 1000, 1),
                "p99_us": round(nearest_rank(spans_ns, 0.99) / 1000, 1),
                "mean_us": round(sum(spans_ns) / len(spans_ns) / 1000, 1),
                "client_cpu_us_per_call": round(client_cpu_ns / calls / 1000, 1),
                "server_cpu_us_per_call": round(server_cpu_ns / calls / 1000, 1),
                "client_pid": os.getpid(),
                "server_pid": child,
            }
        )
    )


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit("usage: python_calls.py SERVER_BINARY DB_PATH")
    asyncio.run(main(sys.argv[1], sys.argv[2], int(os.environ.get("COMPARE_CALLS", "500"))))
