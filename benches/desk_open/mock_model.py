"""A chat-completions model for benches/desk_open/run.sh, on 127.0.0.1:PORT.

It works any ticket as the tests' queue worker does: the first call lists the customer's
orders (shop.find_orders), the second, once a tool has answered, replies in words. It
answers at once; the bench measures memory, not time.
"""
import json
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def completion(messages):
    answered = any(
        m.get("role") == "tool" or str(m.get("content") or "").startswith("<tool_response")
        for m in messages
    )
    if answered:
        text = "Thank you for writing. I have looked up your orders and a colleague will follow up."
        return "stop", {"role": "assistant", "content": text}
    ticket = next((str(m.get("content") or "") for m in messages if m.get("role") == "user"), "")
    customer = re.search(r"C-\d+", ticket)
    arguments = json.dumps({"customer_id": customer.group(0) if customer else "C-0000"})
    call = {"id": "call_1", "type": "function",
            "function": {"name": "shop__find_orders", "arguments": arguments}}
    return "tool_calls", {"role": "assistant", "content": None, "tool_calls": [call]}


class Model(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *_):
        pass

    def answer(self, value):
        body = json.dumps(value).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.answer({"object": "list", "data": [{"id": "mock", "object": "model"}]})

    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
        finish, message = completion(request.get("messages", []))
        self.answer({"id": "chatcmpl-bench", "object": "chat.completion",
                     "choices": [{"index": 0, "finish_reason": finish, "message": message}]})


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Model).serve_forever()
