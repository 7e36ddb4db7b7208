"""The same N tool calls as benches/compare/calls.rs, made by the official Python SDK (mcp 2.3.0).

    python benches/compare/python_calls.py target/release/support-desk /tmp/fresh.sqlite3

Starts `support-desk serve shop --stdio --db DB` (DB is created and seeded when new), lists the
tools, makes WARMUP untimed `get_order_status` calls, then COMPARE_CALLS (default 500) timed
ones, and prints one JSON line: median and p99 in microseconds, nearest-rank, the same
definition calls.rs uses. Each timed span is one `await client.call_tool(...)`, start to end.
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


def nearest_rank(sorted_values: list[int], fraction: float) -> int:
    return sorted_values[max(0, math.ceil(fraction * len(sorted_values)) - 1)]


async def main(binary: str, db: str, calls: int) -> None:
    server = StdioServerParameters(command=binary, args=["serve", "shop", "--stdio", "--db", db])
    async with Client(server) as client:
        await client.list_tools()
        for _ in range(WARMUP):
            await client.call_tool(TOOL, ARGUMENTS)
        spans_ns = []
        for _ in range(calls):
            started = time.perf_counter_ns()
            result = await client.call_tool(TOOL, ARGUMENTS)
            spans_ns.append(time.perf_counter_ns() - started)
            if result.is_error:
                raise SystemExit(f"{TOOL} failed: {result.content}")
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
            }
        )
    )


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit("usage: python_calls.py SERVER_BINARY DB_PATH")
    asyncio.run(main(sys.argv[1], sys.argv[2], int(os.environ.get("COMPARE_CALLS", "500"))))
