"""The graph encoders a process shares: one instance per encoder content and runtime (a runtime session holds the
weights once), whichever ImpScore, service or training step asks for it."""

from __future__ import annotations

import threading

from pragmeter.encoders.graph import GraphEncoder
from pragmeter.encoders.runtime import Runtime
from pragmeter.errors import PragmeterError


def load_graph_encoder(encoder_name: str, runtime: Runtime) -> GraphEncoder:
    """One shared encoder per process, encoder content and runtime (a runtime session holds the weights once; a
    folder whose files were replaced meanwhile gets a new one; two names of one encoder share it)."""
    from pragmeter.encoders.fingerprint import encoder_key

    if not runtime.graph:
        raise PragmeterError(f"backend={runtime.backend!r} is not a graph backend (openvino or onnx)")
    key = (encoder_key(encoder_name), runtime.backend, runtime.precision, runtime.threads)
    with _SHARED_LOCK:  # two threads asking at once get one encoder (and one export)
        if key not in _SHARED:
            if runtime.backend == "openvino":
                from pragmeter.encoders.openvino import OpenVinoEncoder as Encoder
            else:
                from pragmeter.encoders.onnx import OnnxEncoder as Encoder  # type: ignore[assignment]
            _SHARED[key] = Encoder(encoder_name, runtime)
        return _SHARED[key]


def clear_shared_encoders() -> None:
    """Forget the shared encoders (tests that damage or replace what they were built from)."""
    with _SHARED_LOCK:
        _SHARED.clear()


_SHARED: dict[tuple, GraphEncoder] = {}
_SHARED_LOCK = threading.Lock()
