"""Test doubles for pragmeter's tests, benchmarks and dry runs (not used by any command)."""
