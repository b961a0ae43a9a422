"""``pragmeter serve``: ImpScore over HTTP, with a web page at ``/``."""

from __future__ import annotations

import argparse
import math
import sys

from pragmeter.cli.common import RenamedFlag, add_runtime_options
from pragmeter.errors import PragmeterError


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "serve", help="run the ImpScore HTTP service and web page",
        description="Serve ImpScore over HTTP: POST /score, /rank, /distance; GET /health, /version, /openapi.json; "
                    "a web page at /. Binds to 127.0.0.1 unless --host says otherwise. Needs the 'serve' extra.")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000; 0: any free port, printed)")
    parser.add_argument("--impscore", default=None, help="ImpScore model: shipped name or folder (default: the shipped one)")
    parser.add_argument("--model", dest="impscore", action=RenamedFlag, new="--impscore")
    add_runtime_options(parser)
    parser.add_argument("--device", default=None, help="torch device for --backend torch, e.g. cuda")
    parser.add_argument("--max-texts", type=int, default=128, help="texts per request (default 128; more → 413)")
    parser.add_argument("--max-chars", type=int, default=2000, help="characters per text (default 2000; more → 413)")
    parser.add_argument("--max-body-bytes", type=int, default=1 << 20, help="bytes per request body (default 1 MiB)")
    parser.add_argument("--max-batch", type=int, default=256, help="texts per encoder batch across requests (default 256)")
    parser.add_argument("--max-queued-texts", type=int, default=4096,
                        help="texts waiting for the encoder across requests (default 4096; more → 503 with Retry-After)")
    parser.add_argument("--request-timeout", type=float, default=60.0,
                        help="seconds a request may wait for the encoder (default 60; later → 503 with Retry-After, "
                             "its texts dropped)")
    parser.add_argument("--body-timeout", type=float, default=10.0,
                        help="seconds a client has to send a whole request body (default 10; later → 408)")
    parser.add_argument("--max-buffered-bytes", type=int, default=64 << 20,
                        help="bytes of request bodies held at once across connections (default 64 MiB; more → 503 "
                             "with Retry-After)")
    parser.add_argument("--max-wait-ms", type=float, default=2.0,
                        help="how long a lone request waits for others to share its batch (default 2 ms)")
    parser.add_argument("--log-level", default="warning", help="uvicorn log level (default warning)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from pragmeter.serve.app import create_app
        from pragmeter.serve.limits import Limits
        from pragmeter.serve.listen import listening_socket
    except ImportError as error:
        raise PragmeterError(f"pragmeter serve needs the 'serve' extra ({error.name} is missing): "
                             "pip install 'pragmeter[serve]'") from None
    from pragmeter.impscore.model import load_impscore

    for name in ("max_texts", "max_chars", "max_body_bytes", "max_batch", "max_queued_texts", "max_buffered_bytes"):
        if getattr(args, name) < 1:
            raise PragmeterError(f"--{name.replace('_', '-')} must be positive, got {getattr(args, name)}")
    for name in ("request_timeout", "body_timeout"):
        if not (math.isfinite(getattr(args, name)) and getattr(args, name) > 0):
            raise PragmeterError(f"--{name.replace('_', '-')} must be a positive number of seconds, "
                                 f"got {getattr(args, name)}")
    if not 0 <= args.port <= 65535:
        raise PragmeterError(f"--port must be in 0..65535, got {args.port}")
    if not (math.isfinite(args.max_wait_ms) and args.max_wait_ms >= 0):
        raise PragmeterError(f"--max-wait-ms must be >= 0, got {args.max_wait_ms}")
    # Bind before loading the model: a busy port fails at once, and the URL printed is the one really served.
    sock = listening_socket(args.host, args.port)
    try:
        model = load_impscore(args.impscore, backend=args.backend, precision=args.precision, device=args.device)
        model.encode(["warm up the encoder"])  # export/load now, not on the first request
        limits = Limits(args.max_texts, args.max_chars, args.max_body_bytes, args.max_queued_texts,
                        request_timeout=args.request_timeout, body_timeout=args.body_timeout,
                        max_buffered_bytes=args.max_buffered_bytes)
        app = create_app(model, limits, max_batch=args.max_batch, max_wait_ms=args.max_wait_ms)
        host, port = sock.getsockname()[:2]
        shown = f"[{host}]" if ":" in host else host
        print(f"pragmeter serve: {model.signature()} on http://{shown}:{port}/", file=sys.stderr,
              flush=True)
        uvicorn.Server(uvicorn.Config(app, log_level=args.log_level)).run(sockets=[sock])
    finally:
        sock.close()
    return 0
