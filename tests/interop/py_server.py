"""An MCP server written with the official Python SDK (mcp 2.3.0), for tests/it/interop.rs.

    python py_server.py LOG

Serves on stdio. Two tools ask a person something through the client:

- `confirm_address` asks a form (street, postcode, leave with a neighbour) through the SDK's
  own `Resolve(...)`/`Elicit(...)`, which batches it into an input request
  (`InputRequiredResult`) on 2026-07-28 and sends `elicitation/create` on 2025-11-25.
- `verify_identity` asks the person to visit a URL (URL-mode elicitation), written by hand:
  an `InputRequiredResult` on 2026-07-28, `ctx.elicit_url` on older revisions.

Every round of every call appends one JSON line to LOG: what reached this server.
"""

import json
import sys
from typing import Annotated

import mcp_types as types
from pydantic import BaseModel, Field

from mcp.server.mcpserver import (
    AcceptedElicitation,
    Context,
    Elicit,
    ElicitationResult,
    MCPServer,
    Resolve,
)
from mcp.server.mcpserver.exceptions import ToolError

LOG = sys.argv[1] if len(sys.argv) > 1 else None
VERIFY_URL = "https://id.example.com/verify?case=77"
VERIFY_KEY = "verify"

server = MCPServer(name="py-interop", version="2.3.0-test", log_level="WARNING")


def record(**entry) -> None:
    if LOG:
        with open(LOG, "a", encoding="utf-8") as log:
            log.write(json.dumps(entry) + "\n")


def request_meta(ctx: Context) -> dict:
    meta = ctx.request_context.meta
    if meta is None:
        return {}
    return meta if isinstance(meta, dict) else meta.model_dump(by_alias=True, exclude_none=True)


class Address(BaseModel):
    street: str = Field(description="Street and number")
    postcode: str = Field(description="Postcode")
    leave_with_neighbour: bool = Field(default=False, description="Leave the parcel with a neighbour")


def ask_address(order_id: str, ctx: Context) -> Elicit[Address]:
    record(
        tool="confirm_address",
        round="resolver",
        protocol_version=ctx.protocol_version,
        has_responses=ctx.input_responses is not None,
        has_state=ctx.request_state is not None,
    )
    return Elicit(f"Confirm the delivery address for order {order_id}.", Address)


@server.tool()
async def confirm_address(
    order_id: str,
    ctx: Context,
    answer: Annotated[ElicitationResult[Address], Resolve(ask_address)],
) -> str:
    """Ask the person at the desk to confirm a delivery address for an order."""
    content = answer.data.model_dump() if isinstance(answer, AcceptedElicitation) else None
    record(
        tool="confirm_address",
        round="body",
        protocol_version=ctx.protocol_version,
        order_id=order_id,
        action=answer.action,
        content=content,
        meta=request_meta(ctx),
    )
    if content is None:
        raise ToolError(f"The person chose {answer.action}; the address for {order_id} is unchanged.")
    neighbour = " (may be left with a neighbour)" if content["leave_with_neighbour"] else ""
    return f"Address for {order_id} confirmed: {content['street']}, {content['postcode']}{neighbour}."


@server.tool()
async def verify_identity(customer_id: str, ctx: Context) -> str | types.InputRequiredResult:
    """Ask the person at the desk to verify a customer's identity on the identity page."""
    message = f"Verify customer {customer_id} on the identity page."
    responses = ctx.input_responses
    record(
        tool="verify_identity",
        round="call",
        protocol_version=ctx.protocol_version,
        customer_id=customer_id,
        has_responses=responses is not None,
        responses={k: v.model_dump(by_alias=True, exclude_none=True) for k, v in (responses or {}).items()},
        meta=request_meta(ctx),
    )
    if ctx.protocol_version is not None and ctx.protocol_version >= "2026-07-28":
        if not responses or VERIFY_KEY not in responses:
            url = types.ElicitRequestURLParams(message=message, url=VERIFY_URL)
            return types.InputRequiredResult(input_requests={VERIFY_KEY: types.ElicitRequest(params=url)})
        action = getattr(responses[VERIFY_KEY], "action", None)
    else:
        action = (await ctx.elicit_url(message, VERIFY_URL, elicitation_id="verify-77")).action
    if action != "accept":
        raise ToolError(f"The person chose {action}; {customer_id} is not verified.")
    return f"The person agreed to verify {customer_id} at the identity page."


if __name__ == "__main__":
    server.run("stdio")
