"""The interpreter: a cross-encoder that reads a (context, utterance) pair with candidate readings of it.

- ``hub``: where an interpreter's folder comes from (a path, a packaged name in ``models/``, a Hub name);
- ``models/``: the interpreters packaged with pragmeter.
"""
