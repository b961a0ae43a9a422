"""Benchmark tasks, one module each; every module lists its task classes in ``TASKS``
(see :mod:`pragmeter.harness.task` for the interface and :mod:`pragmeter.harness.registry` for discovery)."""
