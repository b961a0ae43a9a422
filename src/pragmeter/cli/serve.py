"""``pragmeter serve``: ImpScore over HTTP, with a web page at ``/``."""

from __future__ import annotations

import argparse

from pragmeter.cli.common import RUNTIME, add


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "serve", help="run the ImpScore HTTP service and web page",
        description="Serve ImpScore and the interpreter over HTTP: POST /score, /rank, /distance, /interpret; GET "
                    "/health, /version, /openapi.json; a web page at /. Binds to 127.0.0.1 unless --host says otherwise; on loopback it answers only "
                    "requests addressed to localhost, 127.0.0.1 or [::1] (a web page cannot reach it through another "
                    "name). Needs the 'serve' extra.")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000; 0: any free port, printed)")
    add(parser, "impscore", *RUNTIME,
        device={"help": "torch device for --backend torch, e.g. cuda"})
    for flag, kind, default, help in (
            ("--max-texts", int, 128, "texts per request (default 128; more → 413)"),
            ("--max-chars", int, 2000, "characters per text (default 2000; more → 413)"),
            ("--max-body-bytes", int, 1 << 20, "bytes per request body (default 1 MiB)"),
            ("--max-batch", int, 256, "texts per encoder batch across requests (default 256)"),
            ("--max-queued-texts", int, 4096, "texts waiting for the encoder across requests (default 4096; more → "
                                              "503 with Retry-After)"),
            ("--request-timeout", float, 60.0, "seconds a request may wait for the encoder (default 60; later → 503 "
                                               "with Retry-After, its texts dropped)"),
            ("--body-timeout", float, 10.0, "seconds a client has to send a whole request body (default 10; later "
                                            "→ 408)"),
            ("--max-buffered-bytes", int, 64 << 20, "bytes of request bodies held at once across connections "
                                                    "(default 64 MiB; more → 503 with Retry-After)"),
            ("--header-timeout", float, 10.0, "seconds a client has to send a request's headers, from connecting or "
                                              "from its previous answer (default 10; later → 408, closed)"),
            ("--keep-alive-timeout", float, 5.0, "seconds an idle kept-alive connection stays open (default 5)"),
            ("--max-connections", int, 1024, "connections open at once (default 1024; more → 503 at once; lowered, "
                                             "with a warning, to what the open-files limit allows)"),
            ("--max-client-connections", int, 256, "connections open at once from one client address (default 256; "
                                                   "more → 503 at once; behind a proxy every client is the proxy)"),
            ("--stall-timeout", float, 120.0, "seconds one encoder batch may run before GET /health answers 503, "
                                              "stalled (default 120)"),
            ("--max-wait-ms", float, 2.0, "how long a lone request waits for others to share its batch (default "
                                          "2 ms)")):
        parser.add_argument(flag, type=kind, default=default, help=help)
    parser.add_argument("--interpreter", default=None,
                        help="interpreter of POST /interpret: packaged name, model folder or an NLI cross-encoder's "
                             "Hub name (default: the packaged default, or $PRAGMETER_INTERPRETER)")
    parser.add_argument("--no-interpreter", action="store_true", help="serve ImpScore only (no /interpret)")
    parser.add_argument("--log-level", default="warning", help="uvicorn log level (default warning)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pragmeter.serve import run_server

    run_server(args.impscore, args.host, args.port, vars(args), backend=args.backend, precision=args.precision,
               device=args.device, max_batch=args.max_batch, max_wait_ms=args.max_wait_ms, log_level=args.log_level,
               interpreter=args.interpreter, with_interpreter=not args.no_interpreter)
    return 0
