"""A scripted stand-in for the gguf backend's llama.cpp child, for tests of process handling without a model.

Set ``GgufServer.child_module = "pragmeter.testing.fake_gguf_server"`` and give the backend a JSON "model" file:
``{"answer": "Neutral", "load_seconds": 0, "never_healthy": false, "latency": 0, "crash_after": null,
"crash_flag": null, "request_log": null}``. ``never_healthy``: never listens (the health wait must time out);
``crash_after`` N: the process dies in the middle of its N-th request (every child; with ``crash_flag``, only
while that file does not exist: it is created first, so a restarted child survives); ``request_log``: one line per request answered
(the prompt's hash), shared by every child, to count requests across restarts and reruns.
"""

from __future__ import annotations

import json
import os
import threading
import time

from pragmeter.testing.fake_server import FakeChatServer, prompt_key
from pragmeter.llm.gguf_server import child_arguments, wait_for_parent


def _serve(args) -> None:
    script = json.loads(open(args.model, encoding="utf-8").read())
    time.sleep(script.get("load_seconds", 0))
    if script.get("never_healthy"):
        wait_for_parent(args.parent)
        return
    seen = 0
    lock = threading.Lock()

    def respond(request: dict):
        nonlocal seen
        with lock:
            seen += 1
            flag = script.get("crash_flag")
            if seen == script.get("crash_after") and not (flag and os.path.exists(flag)):
                if flag:
                    open(flag, "w").close()
                os._exit(1)  # dies mid-request: the client sees a dropped connection
        if script.get("request_log"):
            with open(script["request_log"], "a", encoding="utf-8") as log:
                log.write(prompt_key(request.get("messages", [])) + "\n")
        return script.get("answer", "Neutral")

    with FakeChatServer(respond, latency=script.get("latency", 0.0), port=args.port):
        wait_for_parent(args.parent)


if __name__ == "__main__":
    child_arguments(None, _serve)
