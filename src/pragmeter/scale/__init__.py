"""Scoring corpora beyond one process: Ray Data batch inference (extra ``ray``)."""
