"""Access to the upstream data files: where they live, what they should contain, where they come from."""

from pragmeter.data.root import DATA_ROOT_ENV, data_file, data_root, verify_file

__all__ = ["DATA_ROOT_ENV", "data_file", "data_root", "verify_file"]
