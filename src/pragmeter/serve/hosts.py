"""Which requests a service bound to a loopback address answers: those addressed to this machine by name.

A page on any web site can make the visitor's browser send requests to ``http://127.0.0.1:PORT`` by pointing its
own domain at 127.0.0.1 (DNS rebinding); the browser then sends that domain as the Host, and treats the answers as
the site's own. A service bound to loopback therefore answers only requests whose Host is ``localhost``,
``127.0.0.1`` or ``[::1]`` (alone or with the port served), and whose Origin, when a browser sends one, is one of
those with the port served (this service's own page); others get 403. A service bound to another address (a deliberate choice to serve the network) is not restricted.
"""

from __future__ import annotations

import ipaddress

from pragmeter.serve.limits import Refused, reject

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a bind address or name) is this machine only."""
    if host.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _allowed(port: int | None) -> tuple[set[str], set[str]]:
    """(Host values addressed to this machine: a loopback name alone, which no rebound domain can produce, or with
    the port served; Origins of this service's own pages: a loopback name with the port served)."""
    names = set(LOOPBACK_NAMES)
    if port is None:
        return names, {f"http://{name}" for name in names}
    with_port = {f"{name}:{port}" for name in names}
    return names | with_port, {f"http://{name}" for name in with_port | (names if port == 80 else set())}


class LoopbackOnly:
    """ASGI middleware: 403 for a request whose Host is not a loopback name or whose Origin is not this service's
    own page (see module)."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        server = scope.get("server")
        hosts, origins = _allowed(server[1] if server else None)
        headers = {}
        for name, value in scope.get("headers") or []:
            headers.setdefault(name, value.decode("latin-1"))
        host, origin = headers.get(b"host"), headers.get(b"origin")
        refusal = None
        if host is not None and host.lower() not in hosts:
            refusal = f"Host {host!r}"
        elif origin is not None and origin.lower() not in origins:
            refusal = f"Origin {origin!r}"
        if refusal is None:
            await self.app(scope, receive, send)
            return
        port = f" on port {server[1]}" if server else ""
        await reject(send, Refused(403, f"this service listens on loopback only and answers requests addressed to "
                                        f"localhost, 127.0.0.1 or [::1]{port}, not {refusal} (a web page cannot use "
                                        "it through another name)"))
