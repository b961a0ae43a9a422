"""Fixtures of the encoder tests: the three host kinds the suite runs on, as OpenVINO's CPU plugin describes them."""

from __future__ import annotations

import pytest

# OPTIMIZATION_CAPABILITIES as OpenVINO's CPU plugin reports them: BF16 where its oneDNN may use AVX-512 BF16 (AMX
# hosts have it too), WINOGRAD with AVX-512, FP16 with AVX-512 FP16 (the AMX Xeons). zen4 is what this plugin
# returned on an AMD EPYC (Zen 4); the other two follow the plugin's rule for those CPUs.
HOST_CAPABILITIES = {
    "zen4": frozenset({"BF16", "WINOGRAD", "FP32", "INT8", "BIN", "EXPORT_IMPORT"}),
    "xeon_amx": frozenset({"BF16", "WINOGRAD", "FP32", "FP16", "INT8", "BIN", "EXPORT_IMPORT"}),
    "zen1": frozenset({"FP32", "INT8", "BIN", "EXPORT_IMPORT"}),  # AVX2 only
}


@pytest.fixture
def on_host(monkeypatch):
    """``on_host("zen1")``: from then on this test runs as if on that host kind (no ISA cap set)."""
    import pragmeter.encoders.runtime as runtime

    def become(host: str) -> None:
        monkeypatch.setattr(runtime, "openvino_capabilities", lambda: HOST_CAPABILITIES[host])
        for name in runtime.ISA_ENVS:
            monkeypatch.delenv(name, raising=False)

    return become
