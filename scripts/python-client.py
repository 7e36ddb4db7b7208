"""Talk to the shop's MCP server from the official Python SDK (mcp 2.3.0).

    python scripts/python-client.py target/release/support-desk

Starts `support-desk serve shop --stdio` on a fresh temporary database, lists what the shop
offers, looks up an order, and works a refund above the EUR 150.00 limit: the shop asks for a
lead's release through an input request, which this script's elicitation callback accepts.
"""

import asyncio
import json
import pathlib
import sys
import tempfile

import mcp_types as types
from mcp import Client, StdioServerParameters

ASSETS = pathlib.Path(__file__).resolve().parent.parent / "assets" / "shop"


def refund_above_limit() -> tuple[str, str]:
    """A delivered order with a line above the limit, from the shop's own data."""
    for order in json.loads((ASSETS / "orders.json").read_text()):
        if order["status"] != "delivered":
            continue
        for line in order["lines"]:
            if float(line["unit_price"]) * line["quantity"] > 150:
                return order["order_id"], line["sku"]
    raise SystemExit("no delivered line above the limit in assets/shop/orders.json")


async def lead(context, params: types.ElicitRequestParams) -> types.ElicitResult:
    print("the shop asks:", params.message)
    print("form fields:", list(params.requested_schema["properties"]))
    return types.ElicitResult(action="accept", content={"release": True, "note": "released from Python"})


async def main(binary: str) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        db = str(pathlib.Path(scratch) / "shop.sqlite3")
        server = StdioServerParameters(command=binary, args=["serve", "shop", "--stdio", "--db", db])
        async with Client(server, elicitation_callback=lead) as client:
            print("server:", client.server_info.name if client.server_info else None)
            print("protocol revision:", client.protocol_version)
            print("tools:", [tool.name for tool in (await client.list_tools()).tools])
            print("resources:", [str(r.uri) for r in (await client.list_resources()).resources])
            print("prompts:", [p.name for p in (await client.list_prompts()).prompts])
            status = await client.call_tool("get_order_status", {"order_id": "O-1744"})
            print("O-1744:", status.content[0].text[:120], "…")
            missing = await client.call_tool("get_order_status", {"order_id": "O-7144"})
            print("O-7144 error:", missing.is_error, missing.content[0].text)
            order_id, sku = refund_above_limit()
            quote = await client.call_tool("quote_refund", {"order_id": order_id, "sku": sku, "reason": "arrived broken"})
            quote_id = json.loads(quote.content[0].text)["quote_id"]
            refund = await client.call_tool("issue_refund", {"quote_id": quote_id})
            print("refund:", refund.content[0].text)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "target/release/support-desk"))
