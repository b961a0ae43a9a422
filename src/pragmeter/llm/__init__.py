"""LLM plumbing: chat backends (``pragmeter.llm.backends``), the local llama.cpp server, packaged GGUF models and
answer scoring by log-probabilities."""
