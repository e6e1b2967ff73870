"""A stand-in HTTP endpoint for tests: every POST gets the JSON reply its subclass chooses."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any


class JsonEndpoint(BaseHTTPRequestHandler):
    """Reads each POST's body (kept as ``body``), then sends ``answer()`` as JSON; logs nothing."""

    body = b""

    def answer(self) -> tuple[int, dict[str, Any]]:
        """The HTTP status and JSON body for the request just read (subclasses decide)."""
        raise NotImplementedError

    def do_POST(self) -> None:
        """Consume the request body and send the subclass's answer."""
        self.body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        status, payload = self.answer()
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        """Silent."""
