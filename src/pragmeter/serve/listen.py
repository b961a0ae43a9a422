"""The service's listening socket, bound before the model loads: a busy port fails at once, and the URL printed
is the one really served."""

from __future__ import annotations

import socket

from pragmeter.errors import PragmeterError


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` and listening, inheritable so the server can take it over; a busy port or an
    unknown host is a PragmeterError naming them."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as error:
        raise PragmeterError(f"cannot listen on {host}:{port}: unknown host ({error.strerror})") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: restart over TIME_WAIT
        sock.bind(address)
        sock.listen(2048)
    except OSError as error:
        sock.close()
        raise PragmeterError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None
    sock.set_inheritable(True)
    return sock
