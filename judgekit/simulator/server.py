"""HTTP front end: an OpenAI-compatible server on 127.0.0.1, run in background threads."""

from __future__ import annotations

import json
import re
import socket
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from judgekit.simulator.batches import BatchStore
from judgekit.simulator.config import SimulatorConfig
from judgekit.simulator.core import LoggedRequest, RequestLog, Simulator, error_payload


class _Server(ThreadingHTTPServer):
    """Threading server that remembers open connections so shutdown can close them."""

    daemon_threads = False
    block_on_close = True
    request_queue_size = 256  # many concurrent clients connect at once

    def __init__(self, simulator: Simulator, batches: BatchStore, port: int) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.simulator = simulator
        self.batches = batches
        self.stopping = threading.Event()
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        self.rejected_keys = 0  # requests refused for a wrong or absent key (config.api_key)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        with self.connections_lock:
            self.connections.add(request)
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self.connections_lock:
                self.connections.discard(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet when a client hangs up (a killed job, a timeout); report anything else."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)

    def close_connections(self) -> None:
        """Shut down every open connection so handler threads can finish."""
        with self.connections_lock:
            for connection in list(self.connections):
                with suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    # Headers and body leave in one write, with Nagle's algorithm off: written in two small
    # segments with Nagle on, the second waits for the client's delayed ACK (~40 ms a reply).
    disable_nagle_algorithm = True
    wbufsize = -1  # buffered; http.server flushes after each request

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet: the request log is the record."""

    def _send_json(
        self, status: int, payload: Any, headers: Mapping[str, str] | None = None
    ) -> None:
        self._send_bytes(
            status,
            json.dumps(payload, ensure_ascii=False).encode("utf-8"),
            "application/json",
            headers,
        )

    def _send_bytes(
        self, status: int, data: bytes, content_type: str, headers: Mapping[str, str] | None = None
    ) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            self.close_connection = True  # the client went away (e.g. it timed out first)

    def _not_found(self) -> None:
        self._send_json(
            404,
            error_payload(
                f"No route {self.command} {self.path}", "invalid_request_error", "not_found"
            ),
        )

    def _route(self) -> str:
        path = self.path.split("?", 1)[0].rstrip("/")
        return path[3:] if path.startswith("/v1") else path

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _key_refused(self) -> bool:
        """Answer 401 when the simulator expects a key and this request carries another."""
        expected = self.server.simulator.config.api_key
        if expected is None or self.headers.get("Authorization", "") == f"Bearer {expected}":
            return False
        self._body()  # read the request through, so the connection stays usable
        with self.server.connections_lock:
            self.server.rejected_keys += 1
        self._send_json(
            401,
            error_payload(
                "Incorrect API key provided.", "invalid_request_error", "invalid_api_key"
            ),
        )
        return True

    def do_GET(self) -> None:
        """Models, files, file contents and batches."""
        if self._key_refused():
            return
        route, store = self._route(), self.server.batches
        model = self.server.simulator.config.model
        model_card = {
            "id": model,
            "object": "model",
            "created": 0,
            "owned_by": "judgekit-simulator",
        }
        if route == "/models":
            self._send_json(200, {"object": "list", "data": [model_card]})
        elif match := re.fullmatch(r"/models/([^/]+)", route):
            self._send_json(200, {**model_card, "id": match.group(1)})
        elif match := re.fullmatch(r"/files/([^/]+)(/content)?", route):
            stored = store.file(match.group(1))
            if stored is None:
                self._not_found()
            elif match.group(2):
                self._send_bytes(200, stored.data, "application/octet-stream")
            else:
                self._send_json(200, stored.describe())
        elif match := re.fullmatch(r"/batches/([^/]+)", route):
            job = store.batch(match.group(1))
            self._send_json(200, job.describe()) if job else self._not_found()
        else:
            self._not_found()

    def do_POST(self) -> None:
        """Chat completions, file upload, batch creation and cancellation."""
        if self._key_refused():
            return
        route, raw = self._route(), self._body()
        if route == "/chat/completions":
            self._chat(raw)
        elif route == "/files":
            self._upload(raw)
        elif route == "/batches":
            self._create_batch(raw)
        elif match := re.fullmatch(r"/batches/([^/]+)/cancel", route):
            job = self.server.batches.cancel(match.group(1))
            self._send_json(200, job.describe()) if job else self._not_found()
        else:
            self._not_found()

    def _json_body(self, raw: bytes) -> Any:
        try:
            return json.loads(raw or b"null")
        except json.JSONDecodeError as error:
            self._send_json(
                400, error_payload(f"Body is not JSON: {error.msg}", "invalid_request_error", None)
            )
            return None

    def _chat(self, raw: bytes) -> None:
        body = self._json_body(raw)
        if body is None:
            return
        answer = self.server.simulator.answer_chat(body)
        if answer.delay_s > 0 and self.server.stopping.wait(answer.delay_s):
            self.close_connection = True
            return
        if answer.payload is None:  # a dropped connection: no status line, nothing
            self.close_connection = True
            with suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        self._send_json(answer.status_code, answer.payload, answer.headers)

    def _upload(self, raw: bytes) -> None:
        message = BytesParser(policy=HTTP).parsebytes(
            f"Content-Type: {self.headers.get('Content-Type', '')}\r\n\r\n".encode() + raw
        )
        fields: dict[str, tuple[str | None, bytes]] = {}
        for part in message.iter_parts() if message.is_multipart() else ():
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True)
            if isinstance(name, str) and isinstance(payload, bytes):
                fields[name] = (part.get_filename(), payload)
        if "file" not in fields:
            self._send_json(
                400,
                error_payload("multipart field 'file' is required", "invalid_request_error", None),
            )
            return
        filename, data = fields["file"]
        purpose = fields.get("purpose", (None, b"batch"))[1].decode("utf-8")
        stored = self.server.batches.add_file(filename or "upload.jsonl", purpose, data)
        self._send_json(200, stored.describe())

    def _create_batch(self, raw: bytes) -> None:
        body = self._json_body(raw)
        if body is None:
            return
        if not isinstance(body, dict) or not isinstance(body.get("input_file_id"), str):
            self._send_json(
                400, error_payload("'input_file_id' is required", "invalid_request_error", None)
            )
            return
        job = self.server.batches.create_batch(
            body["input_file_id"],
            str(body.get("endpoint", "")),
            str(body.get("completion_window", "24h")),
            body.get("metadata"),
        )
        if isinstance(job, str):
            self._send_json(400, error_payload(job, "invalid_request_error", None))
        else:
            self._send_json(200, job.describe())


class SimulatorHandle:
    """A running simulator: where it listens, what it received, its counters."""

    def __init__(self, server: _Server) -> None:
        self._server = server
        host, port = server.server_address[:2]
        self.port: int = int(port)
        self.base_url: str = f"http://{host!s}:{self.port}/v1"

    @property
    def config(self) -> SimulatorConfig:
        """The configuration it runs with."""
        return self._server.simulator.config

    @property
    def requests(self) -> RequestLog:
        """Thread-safe log of every chat request received (online and Batch API lines)."""
        return self._server.simulator.log

    @property
    def rejected_keys(self) -> int:
        """Requests answered 401 because they did not carry ``config.api_key``."""
        return self._server.rejected_keys

    def stats(self) -> dict[str, Any]:
        """Counts: ``requests``, ``by_outcome``, ``by_source``, ``by_malformation``, tokens."""
        return self._server.simulator.stats()

    def reset_stats(self, *, forget_seen: bool = False) -> None:
        """Zero the counters and clear the log (``forget_seen``: also forget seen bodies)."""
        self._server.simulator.reset_stats(forget_seen=forget_seen)

    def last(self) -> LoggedRequest:
        """The most recently logged request."""
        return self.requests[-1]


@contextmanager
def run_simulator(config: SimulatorConfig | None = None) -> Iterator[SimulatorHandle]:
    """Serve the simulator on 127.0.0.1 for the duration of a ``with`` block.

    On exit the server stops accepting, sleeping requests wake up, open connections are shut
    and every handler thread is joined.

    Args:
        config: Settings (defaults: no faults, hash scores).

    Yields:
        The running server's handle (``handle.base_url`` is ``http://127.0.0.1:PORT/v1``).
    """
    config = config or SimulatorConfig()
    simulator = Simulator(config)
    batches = BatchStore(
        lambda body: simulator.answer_chat(body, source="batch"),
        delay_s=config.batch_delay_s,
        polls_to_complete=config.batch_polls_to_complete,
        seed=config.seed,
    )
    server = _Server(simulator, batches, config.port)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="judgekit-simulator"
    )
    thread.start()
    try:
        yield SimulatorHandle(server)
    finally:
        server.stopping.set()
        server.shutdown()
        server.close_connections()
        server.server_close()
        thread.join()
