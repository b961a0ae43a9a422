"""Regenerate src/pragmeter/data/manifest.json from ../shared/data/SOURCES.md.

Run once when SOURCES.md changes: ``python tools/make_data_manifest.py ../shared/data/SOURCES.md``.
The manifest records, for each data file, its size, sha256, the pinned upstream URL and the licence that the
summary tables of SOURCES.md give for its source folder.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from urllib.parse import quote

ROW = re.compile(r"^\| `([^`]+)` \| `([^@]+)@([0-9a-f]+):([^`]+)` \| ([\d,]+) \| `([0-9a-f]{64})` \|$")
SUMMARY_ROW = re.compile(r"^\| `([^`/]+)` \|")


def licences(text: str) -> dict[str, str]:
    """Source folder -> licence, from every summary table (a header row with ``short-name`` and ``license``)."""
    found: dict[str, str] = {}
    column = None
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| short-name") and "license" in cells:
            column = cells.index("license")
        elif column is not None and (m := SUMMARY_ROW.match(line.strip())):
            found[m.group(1)] = cells[column].replace("**", "").strip()
        elif not line.startswith("|"):
            column = None
    return found


def main(sources_md: str) -> None:
    text = Path(sources_md).read_text(encoding="utf-8")
    full_commits = set(re.findall(r"\b[0-9a-f]{40}\b", text))
    licence_of = licences(text)
    files = {}
    for line in text.splitlines():
        m = ROW.match(line.strip())
        if not m:
            continue
        local, repo, short, upstream_path, size, sha = m.groups()
        commit = next((c for c in full_commits if c.startswith(short)), None)
        if commit is None:
            raise SystemExit(f"no full commit for {repo}@{short}")
        url = f"https://raw.githubusercontent.com/{repo}/{commit}/{quote(upstream_path)}"
        files[local] = {"sha256": sha, "size": int(size.replace(",", "")), "url": url,
                        "licence": licence_of.get(local.split("/")[0], "not stated in SOURCES.md")}
    out = Path(__file__).resolve().parents[1] / "src/pragmeter/data/manifest.json"
    out.write_text(json.dumps(files, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(files)} files -> {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/data/SOURCES.md")
