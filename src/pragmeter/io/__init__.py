"""Reading and writing user files (txt/csv/tsv/jsonl/parquet, JSON) with clear errors, atomically."""

from pragmeter.io.atomic import atomic_path, write_json_atomic
from pragmeter.io.lock import OutputBusy, output_lock
from pragmeter.io.tables import (check_input, check_output, check_outputs, numeric_column, read_json,
                                 read_records, read_table, read_text, report_rows, require_column, stdin_lines,
                                 write_table)

__all__ = ["OutputBusy", "atomic_path", "check_input", "check_output", "check_outputs", "numeric_column",
           "output_lock", "read_json", "read_records", "read_table", "read_text", "report_rows", "require_column",
           "stdin_lines", "write_json_atomic", "write_table"]
