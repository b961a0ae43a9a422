"""Regenerate src/pragmeter/data/manifest.json from ../shared/data/SOURCES.md.

Run once when SOURCES.md changes: ``python tools/make_data_manifest.py ../shared/data/SOURCES.md``.
The manifest records, for each data file, its size, sha256 and the pinned upstream URL.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from urllib.parse import quote

ROW = re.compile(r"^\| `([^`]+)` \| `([^@]+)@([0-9a-f]+):([^`]+)` \| ([\d,]+) \| `([0-9a-f]{64})` \|$")


def main(sources_md: str) -> None:
    text = Path(sources_md).read_text(encoding="utf-8")
    full_commits = set(re.findall(r"\b[0-9a-f]{40}\b", text))
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
        files[local] = {"sha256": sha, "size": int(size.replace(",", "")), "url": url}
    out = Path(__file__).resolve().parents[1] / "src/pragmeter/data/manifest.json"
    out.write_text(json.dumps(files, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(files)} files -> {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/data/SOURCES.md")
