"""The ImpScore HTTP service (FastAPI): score, rank, distance, health, version, and a web page at ``/``; with an
interpreter (:class:`pragmeter.interpreter.model.Interpreter`), ``/interpret`` too.

All encoder work goes through one MicroBatcher, so concurrent requests share encoder batches; the heads (three
small matrix products) run per request. A request whose client hangs up while it waits is withdrawn from the
batcher (its texts are not encoded), and one that waits past the request timeout is answered 503. The interpreter's
(premise, hypothesis) pairs go through a second MicroBatcher under the same rules. Bodies are read
whole by ``limits.BodyGuard`` before any handler runs. The OpenAPI schema is at ``/openapi.json``; the interactive
docs pages are off because they load scripts from a CDN, and this service works offline.
"""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path

import numpy as np
from fastapi import FastAPI, HTTPException, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from pragmeter.version import __version__
from pragmeter.serve.batcher import BatcherStopped, DeadlineExceeded, EncoderFailed, MicroBatcher, QueueFull
from pragmeter.serve.hosts import LoopbackOnly
from pragmeter.serve.limits import BodyBudget, BodyGuard, Limits


class TextsRequest(BaseModel):
    texts: list[str] = Field(min_length=1, description="sentences to score", examples=[["You are talking too "
                             "loudly.", "I'm finding it a bit hard to concentrate."]])


class RankRequest(TextsRequest):
    distances: bool = Field(False, description="also return the matrix of pairwise pragmatic distances")


class DistanceRequest(BaseModel):
    pairs: list[tuple[str, str]] = Field(min_length=1, description="[a, b] pairs of sentences",
                                         examples=[[["Can you pass the salt?", "Pass the salt."]]])


class ScoreResponse(BaseModel):
    scores: list[float] = Field(description="implicitness in [0, 2], higher = more implicit, in request order")


class RankedText(BaseModel):
    rank: int
    index: int = Field(description="position in the request")
    text: str
    score: float


class RankResponse(BaseModel):
    ranking: list[RankedText] = Field(description="most implicit first")
    distances: list[list[float]] | None = Field(None, description="pragmatic distances, request order × order")


class DistanceResponse(BaseModel):
    distances: list[float] = Field(description="pragmatic distance ‖h_p(a) − h_p(b)‖ of each pair")


class InterpretRequest(BaseModel):
    pairs: list[tuple[str, str]] | None = Field(
        None, min_length=1, description="[premise, hypothesis] pairs to classify (or give utterance and readings)",
        examples=[[["Ann asks Bob if he wants coffee. Bob says, \"It would keep me awake.\"",
                    "Bob does not want coffee."]]])
    context: str = Field("", description="the situation the utterance was said in (with utterance and readings)",
                         examples=["Ann offers Bob a coffee at eleven at night."])
    utterance: str | None = Field(None, description="what was said", examples=["It would keep me awake."])
    readings: list[str] | None = Field(None, min_length=1, description="candidate readings of the utterance",
                                       examples=[["Bob does not want a coffee.", "Bob wants a coffee."]])


class InterpretResponse(BaseModel):
    labels: list[str] = Field(description="the interpreter's labels: the columns of each probabilities row")
    premise: str | None = Field(None, description="the premise the context and utterance make (readings form)")
    probabilities: list[list[float]] = Field(description="each pair's (or reading's) label probabilities")
    scores: list[float] = Field(description="each pair's (or reading's) score as what was meant: P(implied) + "
                                            "P(explicit) (P(entailed) for a 3-way model), in request order")
    choice: int | None = Field(None, description="index of the reading most likely meant (readings form)")


class ErrorResponse(BaseModel):
    detail: str = Field(description="what is wrong with the request, on one line")


# The answers to bad input as they are sent (a one-line detail), documented in place of FastAPI's default 422.
ERRORS = {400: {"model": ErrorResponse, "description": "the body is not UTF-8"},
          403: {"model": ErrorResponse, "description": "a service on loopback addressed by another name (Host or "
                                                       "Origin)"},
          408: {"model": ErrorResponse, "description": "the body did not arrive within the body timeout"},
          413: {"model": ErrorResponse, "description": "too many texts, too long a text or too large a body"},
          422: {"model": ErrorResponse, "description": "malformed JSON, wrong types or empty texts"},
          503: {"model": ErrorResponse, "description": "busy (too many queued texts or buffered bodies) or no answer "
                                                       "within the request timeout; see Retry-After"}}


class ClientGone(Exception):
    """The client hung up while its request waited for the encoder."""


async def _hung_up(request: Request) -> None:
    """Return when the client disconnects (the body has been read, so receive() waits for that alone)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def _unless_hung_up(request: Request, work):
    """The result of the awaitable ``work``, or ClientGone (``work`` cancelled) as soon as the client hangs up."""
    task = asyncio.ensure_future(work)
    watch = asyncio.ensure_future(_hung_up(request))
    try:
        done, _ = await asyncio.wait({task, watch}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watch.cancel()
        if not task.done():
            task.cancel()  # the client is gone (or this handler was cancelled): withdraw the texts
    if task not in done:
        raise ClientGone()
    return task.result()


def _validation_message(error: RequestValidationError) -> str:
    parts = []
    for item in error.errors():
        where = ".".join(str(p) for p in item.get("loc", ()) if p != "body") or "body"
        parts.append(f"{where}: {item.get('msg', 'invalid')}")
    return "; ".join(parts) or "malformed request"


def _unparsable(cause: BaseException | None) -> JSONResponse:
    """The answer to a body json.loads could not read: 400 when it is not UTF-8 (JSON's encoding), naming the first
    bad byte; 422 like any other malformed JSON when it nests past the parser's depth or holds a number too long."""
    if isinstance(cause, UnicodeDecodeError):
        return JSONResponse(status_code=400, content={
            "detail": f"body: not UTF-8 (byte {cause.start} is 0x{cause.object[cause.start]:02x}); send JSON encoded "
                      "as UTF-8"})
    return JSONResponse(status_code=422, content={
        "detail": "body: malformed JSON (nested too deeply, or a number too long to read)"})


def create_app(model, limits: Limits | None = None, max_batch: int = 256, max_wait_ms: float = 2.0,
               loopback_only: bool = False, interpreter=None) -> FastAPI:
    """The service for a loaded ImpScore ``model`` (and a loaded ``interpreter``: ``POST /interpret``); with
    ``loopback_only`` (a service bound to a loopback address), requests addressed to another name than localhost,
    127.0.0.1 or [::1] get 403 (``hosts.LoopbackOnly``)."""
    import torch

    limits = limits or Limits()
    budget = BodyBudget(limits.max_buffered_bytes)
    batcher = MicroBatcher(model.encode, max_texts=max_batch, max_wait_ms=max_wait_ms,
                           max_queued_texts=limits.max_queued_texts)
    batchers = [batcher]
    if interpreter is not None:  # pairs in, label probabilities out: batched as texts are
        pair_batcher = MicroBatcher(interpreter.predict, max_texts=max_batch, max_wait_ms=max_wait_ms,
                                    max_queued_texts=limits.max_queued_texts)
        batchers.append(pair_batcher)
    page = resources.files("pragmeter.serve").joinpath("static/index.html").read_text(encoding="utf-8")

    @asynccontextmanager
    async def lifespan(_app: FastAPI):
        for each in batchers:
            await each.start()
        yield
        for each in batchers:
            await each.stop()

    app = FastAPI(title="pragmeter ImpScore service", version=__version__, lifespan=lifespan,
                  docs_url=None, redoc_url=None,
                  description="Implicitness scores and pragmatic distances of sentences (ImpScore). "
                              f"Limits: {limits.max_texts} texts per request, {limits.max_chars} characters per "
                              f"text, {limits.max_body_bytes} bytes per body (413 beyond); a body not in UTF-8 → "
                              f"400; malformed JSON or unencodable text → 422; headers not received within "
                              f"{limits.header_timeout:g} s or a body within {limits.body_timeout:g} s → 408; more "
                              f"than {limits.max_queued_texts} texts waiting, more than {limits.max_buffered_bytes} "
                              f"bytes of bodies buffered, more than {limits.max_connections} connections, or no "
                              f"answer within {limits.request_timeout:g} s → 503 with Retry-After."
                              + (" Bound to loopback: requests addressed to another name than localhost, 127.0.0.1 "
                                 "or [::1] → 403." if loopback_only else ""))
    app.add_middleware(BodyGuard, limits=limits, budget=budget)
    if loopback_only:  # outermost: a refused request's body is not read
        app.add_middleware(LoopbackOnly)
    app.state.batcher = batcher
    app.state.limits = limits  # the connection settings the server applies (server.service_server)

    @app.exception_handler(RequestValidationError)
    async def malformed(_request: Request, error: RequestValidationError) -> JSONResponse:
        return JSONResponse(status_code=422, content={"detail": _validation_message(error)})

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException) -> JSONResponse:
        # FastAPI answers 400 "There was an error parsing the body" whenever json.loads fails other than with a
        # JSONDecodeError; the cause says which
        if error.status_code == 400 and error.detail == "There was an error parsing the body":
            return _unparsable(error.__cause__)
        return await http_exception_handler(request, error)

    @app.exception_handler(QueueFull)
    async def busy(_request: Request, error: QueueFull) -> JSONResponse:
        return JSONResponse(status_code=503, content={"detail": str(error)},
                            headers={"Retry-After": str(error.retry_after)})

    @app.exception_handler(DeadlineExceeded)
    async def late(_request: Request, error: DeadlineExceeded) -> JSONResponse:
        return JSONResponse(status_code=503, content={"detail": str(error)},
                            headers={"Retry-After": str(error.retry_after)})

    @app.exception_handler(ClientGone)
    async def gone(_request: Request, _error: ClientGone) -> JSONResponse:  # sent to no one: the socket is closed
        return JSONResponse(status_code=503, content={"detail": "the client disconnected"})

    @app.exception_handler(EncoderFailed)
    async def failed(_request: Request, error: EncoderFailed) -> JSONResponse:
        return JSONResponse(status_code=500, content={"detail": str(error)})

    async def heads(texts: list[str], http: Request):
        embeddings = await _unless_hung_up(http, batcher.encode(texts, timeout=limits.request_timeout))
        with torch.inference_mode():
            return model.heads(torch.as_tensor(np.asarray(embeddings), dtype=torch.float32))

    def distances(h_a, h_b) -> list:
        with torch.inference_mode():
            return model.heads.pragmatic_distance_from_features(h_a, h_b).tolist()

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def index() -> str:
        return page

    @app.exception_handler(BatcherStopped)
    async def stopped(_request: Request, error: BatcherStopped) -> JSONResponse:
        return JSONResponse(status_code=503, content={"detail": f"{error}; the service must be restarted"})

    @app.get("/health", summary="liveness: the model is loaded, the batcher runs and no encoder batch has run past "
                                 "the stall timeout (503 saying why otherwise)")
    async def health():
        failure = next((each.failure for each in batchers if each.failure is not None), None)
        if failure is not None:
            return JSONResponse(status_code=503, content={"status": "failed", "detail": failure})
        busy = max(each.busy_for for each in batchers)
        if busy > limits.stall_timeout:  # a hung encoder never fails: its batch just never ends
            return JSONResponse(status_code=503, content={
                "status": "stalled", "detail": f"a model has run one batch for {busy:.0f} s, past the stall "
                                               f"timeout of {limits.stall_timeout:g} s; the service must be restarted"})
        return {"status": "ok", "queued_requests": sum(each.queued for each in batchers),
                "queued_texts": sum(each.queued_texts for each in batchers), "buffered_body_bytes": budget.held,
                "batcher": batcher.stats.to_dict(),
                **({"interpreter_batcher": batchers[1].stats.to_dict()} if interpreter is not None else {})}

    @app.get("/version", summary="package, model, interpreter and limits")
    async def version() -> dict:
        described = None if interpreter is None else {  # a local folder by its name alone, not where it lies
            "name": Path(interpreter.name).name if Path(interpreter.name).exists() else interpreter.name, "labels": interpreter.labels, "meant_labels": interpreter.meant_labels,
            "backend": getattr(interpreter.runtime, "backend", None),
            "runtime": interpreter.runtime.signature() if interpreter.runtime is not None else None}
        return {"pragmeter": __version__, "model": model.signature(), "encoder": model.encoder_name,
                "backend": model.backend, "interpreter": described, "limits": limits.to_dict()}

    @app.post("/score", response_model=ScoreResponse, responses=ERRORS, summary="implicitness of each text")
    async def score(request: TextsRequest, http: Request) -> ScoreResponse:
        limits.check(request.texts)
        implicitness, _, _ = await heads(request.texts, http)
        return ScoreResponse(scores=implicitness.tolist())

    @app.post("/rank", response_model=RankResponse, responses=ERRORS,
              summary="texts ordered by implicitness, most implicit first")
    async def rank(request: RankRequest, http: Request) -> RankResponse:
        limits.check(request.texts)
        implicitness, h_p, _ = await heads(request.texts, http)
        values = implicitness.tolist()
        order = sorted(range(len(values)), key=lambda i: (-values[i], i))
        ranking = [RankedText(rank=r + 1, index=i, text=request.texts[i], score=values[i])
                   for r, i in enumerate(order)]
        matrix = None
        if request.distances:
            n = h_p.shape[0]
            matrix = distances(h_p.unsqueeze(1).expand(n, n, -1), h_p.unsqueeze(0).expand(n, n, -1))
        return RankResponse(ranking=ranking, distances=matrix)

    @app.post("/distance", response_model=DistanceResponse, responses=ERRORS,
              summary="pragmatic distance of each pair")
    async def distance(request: DistanceRequest, http: Request) -> DistanceResponse:
        flat = [text for pair in request.pairs for text in pair]
        limits.check(flat, field="pairs", where=lambda index: f"pairs[{index // 2}][{index % 2}]")
        _, h_p, _ = await heads(flat, http)
        return DistanceResponse(distances=distances(h_p[0::2], h_p[1::2]))

    if interpreter is not None:
        @app.post("/interpret", response_model=InterpretResponse, responses=ERRORS,
                  summary="label probabilities of premise/hypothesis pairs, or which reading of an utterance in "
                          "its context is meant")
        async def interpret(request: InterpretRequest, http: Request) -> InterpretResponse:
            from pragmeter.interpreter.model import premise

            readings_form = request.utterance is not None or request.readings is not None or bool(request.context)
            if (request.pairs is None) == (not readings_form):
                raise HTTPException(422, "give either 'pairs' or 'utterance' with 'readings'")
            if request.pairs is not None:
                flat = [text for pair in request.pairs for text in pair]
                limits.check(flat, field="pairs", where=lambda index: f"pairs[{index // 2}][{index % 2}]")
                pairs, joined = [tuple(pair) for pair in request.pairs], None
            else:
                if request.utterance is None or request.readings is None:
                    raise HTTPException(422, f"'{'readings' if request.readings is None else 'utterance'}' is "
                                             "missing: the readings form needs both")
                limits.check([request.utterance], field="utterance", where=lambda _: "utterance")
                limits.check(request.readings, field="readings")
                if request.context:  # may be empty; when given, held to the same rules as any text
                    limits.check([request.context], field="context", where=lambda _: "context")
                joined = premise(request.context, request.utterance)
                pairs = [(joined, reading) for reading in request.readings]
            rows = np.asarray(await _unless_hung_up(http, batchers[1].encode(pairs, timeout=limits.request_timeout)),
                              dtype=np.float64)
            if joined is not None and interpreter.rechecks_close_calls:  # as Interpreter.choose: a close choice
                rows = await _unless_hung_up(http, batchers[1].run(
                    interpreter.settle_close_choices, [joined] * len(pairs), list(request.readings), [len(pairs)],
                    rows))
            scores = interpreter.meant_scores(rows).tolist()
            choice = int(np.argmax(scores)) if joined is not None else None
            return InterpretResponse(labels=interpreter.labels, premise=joined, probabilities=rows.tolist(),
                                     scores=scores, choice=choice)

    return app
