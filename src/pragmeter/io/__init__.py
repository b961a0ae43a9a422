"""Reading and writing user files (txt/csv/tsv/jsonl/parquet) with clear errors, atomically."""

from pragmeter.io.atomic import atomic_path, write_json_atomic
from pragmeter.io.tables import read_table, require_column, write_table

__all__ = ["atomic_path", "read_table", "require_column", "write_json_atomic", "write_table"]
