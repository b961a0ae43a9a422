"""Watching the OpenVINO encoder from a test (tests/ is on the import path through its conftest): how many texts
each call takes (the steps a progress bar moves by) and what stderr held when it was called (a bar drawn before the
encoder sees its first text)."""

from __future__ import annotations


def watch_openvino_encoder(monkeypatch, capsys, step: int) -> tuple[list[int], list[str]]:
    """(texts per call, stderr before each call), filled as the test runs; long jobs encode ``step`` texts a step
    ($PRAGMETER_CHUNK_SIZE)."""
    from pragmeter.encoders.openvino import OpenVinoEncoder

    monkeypatch.setenv("PRAGMETER_CHUNK_SIZE", str(step))
    calls, err = [], []
    encode = OpenVinoEncoder.encode

    def counted(self, batch, *args, **kwargs):
        err.append(capsys.readouterr().err)
        calls.append(len(batch))
        return encode(self, batch, *args, **kwargs)

    monkeypatch.setattr(OpenVinoEncoder, "encode", counted)
    return calls, err
