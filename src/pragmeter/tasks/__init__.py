"""Benchmark tasks, one module each; every module lists its task classes in ``TASKS``
(see :mod:`pragmeter.eval.task` for the interface and :mod:`pragmeter.eval.registry` for discovery)."""
