"""Any OpenAI-compatible chat-completions server: vLLM, Ollama, llama.cpp, OpenAI.

Model arguments (``--model-args k=v,…``):
  base_url (required), model (required), api_key_env (default OPENAI_API_KEY; the key is read from that
  environment variable, sent as a Bearer token and never written anywhere), temperature (default 0),
  max_tokens (default: the task's), seed, top_p, presence_penalty, frequency_penalty (default: not sent),
  concurrency (default 8),
  timeout (seconds per request attempt, a total deadline from sending to the last byte of the answer, default 120),
  max_retries (default 8), backoff (first retry delay, default 1 s), max_backoff (default 60 s).

Retries with exponential backoff and full jitter on 429, 408, 5xx, timeouts, dropped connections and
unreadable bodies; a Retry-After (or retry-after-ms) header sets the delay instead. 401/403/404 stop the run;
other 4xx fail that request only. Null or empty content is returned as an answer with ``text`` None/"";
content sent as a list of parts (``[{"type": "text", "text": …}]``) is the joined text of its text parts, content
of any other type (a number, an object) is no text (an invalid answer), and so is a body over MAX_BODY_BYTES
(not read further, so a runaway server cannot fill the memory).
Asked for ``top_logprobs``, the first token's alternatives are returned; a server that sends none stops the run.
"""

from __future__ import annotations

import asyncio
import datetime
import email.utils
import json
import logging
import os
import random
import time

from pragmeter.errors import MissingExtra, PragmeterError

try:
    import httpx
except ImportError:  # pragma: no cover - depends on the install
    raise MissingExtra("harness", "the openai-chat backend", "httpx is missing") from None
from pragmeter.llm.backends.base import BackendFailed, BackendFatal, ChatBackend, Completion, reject_unknown_args
from pragmeter.llm.request import Request

log = logging.getLogger("pragmeter")

_RETRY_STATUS = {408, 409, 425, 429}
_FATAL_STATUS = {401, 403, 404}
MAX_RETRY_AFTER = 600.0  # seconds; a longer Retry-After is treated as this
MAX_BODY_BYTES = 1 << 20  # an answer body larger than this is an invalid answer (answers are a few hundred bytes)
# Optional decoding arguments sent only when given (name -> type); subclasses add server-specific ones.
OPENAI_DECODING = {"top_p": float, "presence_penalty": float, "frequency_penalty": float}
_TRANSPORT = {"api_key_env", "concurrency", "timeout", "max_retries", "backoff", "max_backoff"}
_KNOWN = {"base_url", "model", "temperature", "max_tokens", "seed", *_TRANSPORT, *OPENAI_DECODING}


def _number(args: dict[str, str], key: str, kind, default):
    if key not in args or args[key] == "":
        return default
    try:
        return kind(args[key])
    except ValueError:
        raise PragmeterError(f"model argument {key}={args[key]!r} is not a valid {kind.__name__}") from None


def retry_after_seconds(headers: httpx.Headers | dict, now: float | None = None) -> float | None:
    """Delay asked for by ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date), else None."""
    headers = httpx.Headers(headers)
    if "retry-after-ms" in headers:
        try:
            return max(0.0, float(headers["retry-after-ms"]) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (ValueError, TypeError, IndexError):  # neither seconds nor a date ("soon"): as if absent
        return None
    if parsed.tzinfo is None:  # a date without a zone is UTC in HTTP
        parsed = parsed.replace(tzinfo=datetime.timezone.utc)
    return max(0.0, parsed.timestamp() - (time.time() if now is None else now))


def content_text(content: object) -> str | None:
    """The answer text of a message's ``content``: a string as is; a list of parts (OpenAI's newer shape) joined
    from its text parts; anything else (a number, an object, a list without text parts) None, an invalid answer."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [part.get("text") for part in content
                 if isinstance(part, dict) and part.get("type") in ("text", "output_text")]
        if texts and all(isinstance(text, str) for text in texts):
            return "".join(texts)
    return None


def decoding_args(args: dict[str, str], kinds: dict[str, type]) -> dict:
    """The optional decoding arguments given in ``args``, typed (empty values are left out)."""
    return {key: _number(args, key, kind, None) for key, kind in sorted(kinds.items()) if args.get(key)}


class OpenAIChatBackend(ChatBackend):
    def __init__(self, base_url: str, model: str, api_key_env: str = "OPENAI_API_KEY", temperature: float = 0.0,
                 max_tokens: int | None = None, seed: int | None = None, top_p: float | None = None,
                 concurrency: int = 8, timeout: float = 120.0, max_retries: int = 8, backoff: float = 1.0,
                 max_backoff: float = 60.0, extra_decoding: dict | None = None):
        if concurrency < 1:
            raise PragmeterError("model argument concurrency must be at least 1")
        if not base_url.startswith(("http://", "https://")):  # else every request fails as a network error
            raise PragmeterError(f"model argument base_url must be an http:// or https:// URL, got {base_url!r}")
        for name, value, least in (("timeout", timeout, None), ("max_retries", max_retries, 0), ("backoff", backoff, 0),
                                   ("max_backoff", max_backoff, 0), ("temperature", temperature, 0),
                                   ("max_tokens", max_tokens, 1)):
            if value is not None and not (value > 0 if least is None else value >= least):
                bound = "above 0" if least is None else f"at least {least}"
                raise PragmeterError(f"model argument {name} must be {bound}, got {value:g}")
        top_p = (extra_decoding or {}).get("top_p", top_p)
        if top_p is not None and not 0 < top_p <= 1:
            raise PragmeterError(f"model argument top_p must be in (0, 1], got {top_p:g}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.temperature, self.max_tokens, self.seed = temperature, max_tokens, seed
        # Optional decoding parameters (top_p, penalties, server-specific samplers), sent only when set.
        self.extra_decoding = {k: v for k, v in {"top_p": top_p, **(extra_decoding or {})}.items() if v is not None}
        self.concurrency = concurrency
        self.timeout, self.max_retries = timeout, max_retries
        self.backoff, self.max_backoff = backoff, max_backoff
        self._client: httpx.AsyncClient | None = None
        self._jitter = random.Random()
        self._said_unreachable = False

    @classmethod
    def from_args(cls, target: str | None, args: dict[str, str]) -> "OpenAIChatBackend":
        reject_unknown_args(args, _KNOWN, "openai-chat")
        model = args.get("model") or target
        if not args.get("base_url") or not model:
            raise PragmeterError("openai-chat needs model_args base_url=URL,model=NAME "
                                 "(e.g. base_url=http://localhost:8000/v1)")
        return cls(base_url=args["base_url"], model=model, **cls.common_args(args, default_concurrency=8))

    @staticmethod
    def common_args(args: dict[str, str], default_concurrency: int, kinds: dict[str, type] = OPENAI_DECODING) -> dict:
        """Constructor arguments shared with backends that reuse this client (decoding and transport)."""
        if args.get("api_key_env") and args["api_key_env"] not in os.environ:  # named, so a key is expected
            raise PragmeterError(f"model argument api_key_env names ${args['api_key_env']}, which is not set")
        return dict(
            api_key_env=args.get("api_key_env") or "OPENAI_API_KEY",
            temperature=_number(args, "temperature", float, 0.0), max_tokens=_number(args, "max_tokens", int, None),
            seed=_number(args, "seed", int, None), extra_decoding=decoding_args(args, kinds),
            concurrency=_number(args, "concurrency", int, default_concurrency),
            timeout=_number(args, "timeout", float, 120.0), max_retries=_number(args, "max_retries", int, 8),
            backoff=_number(args, "backoff", float, 1.0), max_backoff=_number(args, "max_backoff", float, 60.0),
        )

    def identity(self) -> dict:
        return {"backend": "openai-chat", "model": self.model}

    def decoding(self, max_tokens: int | None) -> dict:
        params = {"temperature": self.temperature, "max_tokens": self.max_tokens or max_tokens}
        if self.seed is not None:
            params["seed"] = self.seed
        params.update(self.extra_decoding)
        return params

    def settings(self) -> dict:
        return {**super().settings(), "extra_decoding": self.extra_decoding, "base_url": self.base_url,
                "api_key_env": self.api_key_env,
                "timeout": self.timeout, "max_retries": self.max_retries}

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            headers = {"Content-Type": "application/json"}
            key = os.environ.get(self.api_key_env)
            if key:
                headers["Authorization"] = f"Bearer {key}"
            limits = httpx.Limits(max_connections=self.concurrency, max_keepalive_connections=self.concurrency)
            self._client = httpx.AsyncClient(headers=headers, timeout=self.timeout, limits=limits)
        return self._client

    def _delay(self, attempt: int, asked: float | None) -> float:
        """Seconds before retry ``attempt`` + 1: what the server asked (never less, plus up to 10% jitter so
        waiting clients do not return together), else full jitter over an exponentially growing window."""
        if asked is not None:
            asked = min(asked, MAX_RETRY_AFTER)
            return asked + self._jitter.uniform(0, 0.1 * max(asked, 0.01))
        return self._jitter.uniform(0, min(self.max_backoff, self.backoff * 2 ** attempt))

    async def _repaired(self) -> bool:
        """Called after a dropped connection or 5xx: True when the cause was repaired (retry at once), e.g. a
        local server restarted. A remote server cannot be repaired from here."""
        return False

    def _completion(self, payload: dict, top_logprobs: int | None) -> Completion:
        choice = payload["choices"][0]
        content = content_text((choice.get("message") or {}).get("content"))
        alternatives = None
        if top_logprobs:
            tokens = (choice.get("logprobs") or {}).get("content")
            if tokens is None:
                raise BackendFatal(f"{self.base_url} sent no log-probabilities (it does not support "
                                   "logprobs/top_logprobs): use mode=generate")
            first = tokens[0].get("top_logprobs") or [] if tokens else []
            alternatives = tuple((str(t["token"]), float(t["logprob"])) for t in first)
        return Completion(text=content, finish_reason=choice.get("finish_reason"), top_logprobs=alternatives)

    async def complete(self, request: Request) -> Completion:
        sample, top_logprobs = request.sample, request.top_logprobs
        body = {"model": self.model, "messages": request.messages, **self.decoding(request.max_tokens)}
        if body.get("max_tokens") is None:
            body.pop("max_tokens")
        if sample and "seed" in body:
            body["seed"] += sample  # independent samples need different seeds
        if top_logprobs:
            body.update(logprobs=True, top_logprobs=top_logprobs)
        problem = "no attempt"
        for attempt in range(self.max_retries + 1):
            asked = None
            url = f"{self.base_url}/chat/completions"  # read each attempt: a restarted local server moves
            try:
                status, headers, raw = await self._post(url, body)
            except (httpx.TimeoutException, TimeoutError):
                problem = f"timeout after {self.timeout:g} s"
            except httpx.TransportError as error:
                problem = f"connection error ({type(error).__name__}) at {url}"
                if await self._repaired():
                    continue
                if not self._said_unreachable and self.max_retries:  # retries take minutes: say why, once
                    self._said_unreachable = True
                    log.warning(f"warning: cannot reach {url} ({type(error).__name__}); retrying up to "
                                f"{self.max_retries} times (model argument max_retries)")
            else:
                text = "" if raw is None else raw[:200].decode("utf-8", errors="replace")
                if status == 200 and raw is None:
                    return Completion(text=None, finish_reason=f"body over {MAX_BODY_BYTES} bytes")
                if status == 200:
                    try:
                        return self._completion(json.loads(raw), top_logprobs)
                    except (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError):
                        problem = "unreadable response body"
                elif status in _FATAL_STATUS:
                    raise BackendFatal(f"{url} answered HTTP {status}: {text!r} "
                                       f"(check model={self.model!r} and ${self.api_key_env})")
                elif status in _RETRY_STATUS or status >= 500:
                    problem = f"HTTP {status}"
                    asked = retry_after_seconds(headers)
                    if status >= 500 and await self._repaired():
                        continue
                else:
                    raise BackendFailed(f"HTTP {status}: {text}")
            if attempt < self.max_retries:
                await asyncio.sleep(self._delay(attempt, asked))
        raise BackendFailed(f"gave up after {self.max_retries + 1} attempts: {problem}")

    async def _post(self, url: str, body: dict) -> tuple[int, httpx.Headers, bytes | None]:
        """(status, headers, body) of one attempt within ``timeout`` in total (httpx's timeout is per read, so a
        server trickling one byte at a time would hold the request for ever); body None when over MAX_BODY_BYTES."""
        async with asyncio.timeout(self.timeout):
            async with self._http().stream("POST", url, json=body) as response:
                chunks, size = [], 0
                async for chunk in response.aiter_bytes():
                    size += len(chunk)
                    if size > MAX_BODY_BYTES:
                        return response.status_code, response.headers, None
                    chunks.append(chunk)
                return response.status_code, response.headers, b"".join(chunks)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


BACKEND = OpenAIChatBackend
