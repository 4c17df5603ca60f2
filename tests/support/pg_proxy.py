"""A counting PostgreSQL proxy on loopback: real connections pass through it byte for byte, and it counts the
frontend messages that make the client wait for the server, which is what a round trip is.

In the PostgreSQL wire protocol (v3) a client waits for an answer after a simple ``Query`` (``Q``) or after the
``Sync`` (``S``) that closes an extended-protocol batch (Parse/Bind/Execute...); psycopg's pipeline mode sends
many statements before one ``Sync``, and when it needs a result before the Sync (a fetch inside the pipeline)
it sends a ``Flush`` (``H``) and waits for it. So ``round_trips`` = ``Q`` + ``S`` + every ``H`` that does not
directly follow an ``S`` (psycopg ends a pipeline with Sync then Flush: one wait), counted from the bytes the
client really sent (the startup packet and the optional SSL/GSS request carry no type byte and are skipped).
Use ``sslmode=disable`` in the proxied URL so the stream stays readable.
"""

from __future__ import annotations

import socket
import struct
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from psycopg.conninfo import conninfo_to_dict, make_conninfo

_SSL_REQUEST = 80877103
_GSSENC_REQUEST = 80877104
_SYNC = b"S"
_FLUSH = b"H"
_WAITING = (b"Q", _SYNC)


class CountingPgProxy:
    def __init__(self, upstream_host: str, upstream_port: int) -> None:
        self._upstream = (upstream_host, upstream_port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._messages: Counter[bytes] = Counter()
        self._waits = 0
        self._stopped = threading.Event()
        self._threads: list[threading.Thread] = []
        self._sockets: list[socket.socket] = []

    # -- counting ---------------------------------------------------------------------------------------------
    @property
    def round_trips(self) -> int:
        with self._lock:
            return self._waits

    def messages(self) -> Counter[bytes]:
        with self._lock:
            return Counter(self._messages)

    def _count(self, kind: bytes, previous: bytes) -> None:
        with self._lock:
            self._messages[kind] += 1
            if kind in _WAITING or (kind == _FLUSH and previous != _SYNC):
                self._waits += 1

    def url(self, database_url: str) -> str:
        """``database_url`` through this proxy (host and port replaced, SSL off)."""
        return make_conninfo(
            database_url, host="127.0.0.1", hostaddr="", port=str(self.port), sslmode="disable"
        )

    # -- serving ----------------------------------------------------------------------------------------------
    def start(self) -> CountingPgProxy:
        self._spawn(self._accept)
        return self

    def stop(self) -> None:
        self._stopped.set()
        # Closing a listening socket does not wake a thread blocked in accept() on it; shutting it down does
        # (on Linux, accept() then fails), so the accept thread ends now instead of at its join timeout.
        with suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        for sock in list(self._sockets):
            _close(sock)
        for thread in self._threads:
            thread.join(timeout=5)

    def _connect_upstream(self) -> socket.socket:
        host, port = self._upstream
        if host.startswith("/"):  # a Unix-domain socket directory (the embedded server)
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.connect(f"{host}/.s.PGSQL.{port}")
            return server
        return socket.create_connection(self._upstream)

    def _spawn(self, target: object, *args: object) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)  # type: ignore[arg-type]
        self._threads.append(thread)
        thread.start()

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                server = self._connect_upstream()
            except OSError:
                _close(client)
                continue
            self._sockets += [client, server]
            self._spawn(self._frontend, client, server)
            self._spawn(_pump, server, client)

    def _frontend(self, client: socket.socket, server: socket.socket) -> None:
        """Client to server: forward every chunk as read, and parse it into messages to count them."""
        buffer = b""
        started = False
        previous = b""
        while True:
            try:
                chunk = client.recv(65536)
            except OSError:
                chunk = b""
            if not chunk:
                _close(server)
                return
            try:
                server.sendall(chunk)
            except OSError:
                _close(client)
                return
            buffer += chunk
            while True:
                if not started:
                    if len(buffer) < 8:
                        break
                    (length,) = struct.unpack("!i", buffer[:4])
                    if len(buffer) < length:
                        break
                    (code,) = struct.unpack("!i", buffer[4:8])
                    started = code not in (_SSL_REQUEST, _GSSENC_REQUEST)
                    buffer = buffer[length:]
                    continue
                if len(buffer) < 5:
                    break
                (length,) = struct.unpack("!i", buffer[1:5])
                if len(buffer) < 1 + length:
                    break
                kind = buffer[:1]
                self._count(kind, previous)
                previous = kind
                buffer = buffer[1 + length :]


def _pump(source: socket.socket, sink: socket.socket) -> None:
    while True:
        try:
            chunk = source.recv(65536)
        except OSError:
            chunk = b""
        if not chunk:
            _close(sink)
            return
        try:
            sink.sendall(chunk)
        except OSError:
            _close(source)
            return


def _close(sock: socket.socket) -> None:
    # Already closed by the other side: nothing left to shut down.
    with suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()


@contextmanager
def counting_proxy(database_url: str) -> Iterator[CountingPgProxy]:
    params = conninfo_to_dict(database_url)
    host = str(params.get("hostaddr") or params.get("host") or "127.0.0.1")
    proxy = CountingPgProxy(host, int(str(params.get("port") or 5432))).start()
    try:
        yield proxy
    finally:
        proxy.stop()
