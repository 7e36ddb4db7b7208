"""The official Python SDK (mcp 2.3.0) as a client of the shop, for tests/it/interop.rs.

    python shop_client.py BINARY DB [auto|legacy]

Starts `BINARY serve shop --stdio --db DB`, lists what the shop offers, looks up an order that
exists and one that does not, and works two refunds above the limit: the lead's release form is
answered by this client's elicitation callback, accept (release: yes) for the first and decline
for the second. Prints one JSON object with everything it saw, and nothing else on stdout.
`auto` lets the SDK probe (2026-07-28 when the server speaks it); `legacy` forces the
initialize handshake of 2025-11-25.
"""

import asyncio
import json
import pathlib
import sys

import mcp_types as types
from mcp import Client, StdioServerParameters

ASSETS = pathlib.Path(__file__).resolve().parents[2] / "assets" / "shop"


def refunds_above_limit(count: int) -> list[tuple[str, str]]:
    """Delivered lines above the EUR 150.00 limit, each on a different order, from the shop's data."""
    found: list[tuple[str, str]] = []
    for order in json.loads((ASSETS / "orders.json").read_text()):
        if order["status"] != "delivered":
            continue
        for line in order["lines"]:
            if float(line["unit_price"]) * line["quantity"] > 150:
                found.append((order["order_id"], line["sku"]))
                break
        if len(found) == count:
            return found
    raise SystemExit(f"fewer than {count} delivered lines above the limit in assets/shop/orders.json")


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


def json_or_text(text: str):
    try:
        return json.loads(text)
    except ValueError:
        return text


class Lead:
    """Answers the shop's release forms in order, and remembers what each asked."""

    def __init__(self, answers: list[types.ElicitResult]) -> None:
        self.answers = answers
        self.asked: list[dict] = []

    async def __call__(self, context, params: types.ElicitRequestParams) -> types.ElicitResult:
        schema = getattr(params, "requested_schema", None) or {}
        self.asked.append(
            {
                "mode": getattr(params, "mode", None) or "form",
                "message": params.message,
                "fields": list(schema.get("properties", {})),
                "required": schema.get("required", []),
            }
        )
        if not self.answers:
            return types.ElicitResult(action="cancel")
        return self.answers.pop(0)


async def main(binary: str, db: str, mode: str) -> dict:
    lead = Lead(
        [
            types.ElicitResult(action="accept", content={"release": True, "note": "released from Python"}),
            types.ElicitResult(action="decline"),
        ]
    )
    server = StdioServerParameters(command=binary, args=["serve", "shop", "--stdio", "--db", db], env={"RUST_LOG": "warn"})
    seen: dict = {}
    async with Client(server, elicitation_callback=lead, mode=mode, read_timeout_seconds=30) as client:
        seen["protocol_version"] = client.protocol_version
        seen["server_name"] = client.server_info.name if client.server_info else None
        seen["tools"] = sorted(tool.name for tool in (await client.list_tools()).tools)
        seen["resources"] = sorted(str(r.uri) for r in (await client.list_resources()).resources)
        seen["prompts"] = sorted(p.name for p in (await client.list_prompts()).prompts)

        found = await client.call_tool("get_order_status", {"order_id": "O-1744"})
        seen["found"] = {"is_error": bool(found.is_error), "result": json_or_text(text_of(found))}
        missing = await client.call_tool("get_order_status", {"order_id": "O-7144"})
        seen["missing"] = {"is_error": bool(missing.is_error), "text": text_of(missing)}

        seen["refunds"] = []
        for order_id, sku in refunds_above_limit(2):
            quote = await client.call_tool(
                "quote_refund", {"order_id": order_id, "sku": sku, "reason": "arrived broken"}
            )
            quote_id = json.loads(text_of(quote))["quote_id"]
            asked_before = len(lead.asked)
            refund = await client.call_tool("issue_refund", {"quote_id": quote_id})
            after = await client.call_tool("get_order_status", {"order_id": order_id})
            seen["refunds"].append(
                {
                    "order_id": order_id,
                    "sku": sku,
                    "quote_id": quote_id,
                    "asked": lead.asked[asked_before:],
                    "is_error": bool(refund.is_error),
                    "result": json_or_text(text_of(refund)),
                    "order_refunds": json.loads(text_of(after))["refunds"],
                }
            )
    return seen


if __name__ == "__main__":
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    mode = sys.argv[3] if len(sys.argv) > 3 else "auto"
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2], mode)), indent=2))
