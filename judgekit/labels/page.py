"""The labelling page of ``judgekit label``: the widget's front end on a page of its own.

A small HTTP server on 127.0.0.1 serves one :class:`~judgekit.labels.session.LabellingSession`
to a browser: the page (``labeller.js`` with a stand-in for the widget's model), its blind
state, and one endpoint that saves a label. Every path starts with a random token, so another
user of the machine cannot post labels. Nothing but the session's state is ever sent: the
server does not know the judge's scores. A reload asks the server again; a restarted server
resumes from ``labels.csv``.
"""

from __future__ import annotations

import html
import json
import secrets
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from judgekit.labels.session import FRONT_END, STYLE, LabellingSession
from judgekit.types import UsageError

#: The page: the shared front end, fed by ``page.js`` (a model that talks to this server).
PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<link rel="stylesheet" href="labeller.css">
<style>body {{ font-family: sans-serif; margin: 2em auto; max-width: 62em; }}</style>
</head><body><h2>{title}</h2><div id="labeller"></div>
<script type="module" src="page.js"></script></body></html>
"""


class LabellingPage:
    """Serve ``session`` at ``http://127.0.0.1:PORT/TOKEN/`` until :meth:`close`.

    Args:
        session: The labeller's session.
        title: The page's heading (the study's name, say).
        port: Port on 127.0.0.1; 0 picks a free one.
    """

    def __init__(self, session: LabellingSession, title: str, port: int = 0) -> None:
        self.session = session
        self.position = session.resume_position()
        self.error = ""
        self.token = secrets.token_urlsafe(12)
        self._lock = threading.Lock()
        self._page = PAGE.format(title=html.escape(title)).encode("utf-8")
        try:
            self._server = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        except OSError as error:
            raise UsageError(f"--port {port}: {error.strerror}; pick another port") from None
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The page's address (with its token)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/{self.token}/"

    def start(self) -> LabellingPage:
        """Start serving in a background thread."""
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving (every label is already in the file)."""
        self._server.shutdown()
        self._server.server_close()

    def state(self) -> dict[str, Any]:
        """The session's blind state, with the page's position and last message."""
        return {**self.session.state(), "position": self.position, "error": self.error}

    def opened(self) -> dict[str, Any]:
        """The state for a page (re)loaded: at the first unlabelled item, not the last viewed."""
        with self._lock:
            self.position = self.session.resume_position()
            return self.state()

    def label(self, message: dict[str, Any]) -> dict[str, Any]:
        """Save the label in ``message`` (``position, status, score, note, advance``)."""
        with self._lock:
            position = int(message["position"])
            score = message.get("score")
            try:
                self.session.record(
                    position,
                    str(message["status"]),
                    None if score is None else float(score),
                    str(message.get("note", "")),
                )
            except (OSError, ValueError) as problem:
                self.error = f"label not saved: {problem}"
                return self.state()
            self.error = ""
            if message.get("advance", True):
                self.position = min(position + 1, len(self.session.ids) - 1)
            return self.state()

    def move(self, message: dict[str, Any]) -> dict[str, Any]:
        """Remember the page's position (a reload opens at the first unlabelled item)."""
        with self._lock:
            self.position = max(0, min(int(message["position"]), len(self.session.ids) - 1))
            self.error = ""
            return self.state()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        page = self
        files = {
            "": (page._page, "text/html"),
            "labeller.js": (FRONT_END.read_bytes(), "text/javascript"),
            "labeller.css": (STYLE.read_bytes(), "text/css"),
            "page.js": (FRONT_END.with_name("page.js").read_bytes(), "text/javascript"),
        }

        class Handler(BaseHTTPRequestHandler):
            def _reply(self, status: HTTPStatus, body: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", f"{kind}; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

            def _route(self) -> str | None:
                prefix = f"/{page.token}"
                if self.path == prefix:
                    self.send_response(HTTPStatus.MOVED_PERMANENTLY)
                    self.send_header("Location", prefix + "/")
                    self.end_headers()
                    return None
                if not self.path.startswith(prefix + "/"):
                    self._reply(HTTPStatus.NOT_FOUND, b"not found", "text/plain")
                    return None
                return self.path[len(prefix) + 1 :]

            def do_GET(self) -> None:
                name = self._route()
                if name is None:
                    return
                if name == "state":
                    state = json.dumps(page.opened()).encode()
                    self._reply(HTTPStatus.OK, state, "application/json")
                elif name in files:
                    self._reply(HTTPStatus.OK, *files[name])
                else:
                    self._reply(HTTPStatus.NOT_FOUND, b"not found", "text/plain")

            def do_POST(self) -> None:
                name = self._route()
                if name is None:
                    return
                actions = {"label": page.label, "position": page.move}
                if name not in actions:
                    self._reply(HTTPStatus.NOT_FOUND, b"not found", "text/plain")
                    return
                length = int(self.headers.get("Content-Length", "0"))
                try:
                    message = json.loads(self.rfile.read(length) or b"{}")
                    state = actions[name](message)
                except (ValueError, KeyError, TypeError) as problem:
                    state = {**page.state(), "error": f"label not saved: bad request ({problem})"}
                self._reply(HTTPStatus.OK, json.dumps(state).encode(), "application/json")

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: the terminal shows the labelling progress, not every request."""

        return Handler
