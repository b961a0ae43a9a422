"""``pragmeter eval``: benchmark tasks (``pragmeter.tasks``) run against a chat model.

- ``task``/``classification``: the task interface (data + prompt + parser + metric) and its classification shape
- ``registry``: discovery of the task modules of ``pragmeter.tasks``
- ``runner``: answers every task prompt through :mod:`pragmeter.llm`, scores, writes results and sample logs
"""
