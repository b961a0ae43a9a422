"""Regenerate src/pragmeter/data/manifest.json from ../shared/data/SOURCES.md.

Run once when SOURCES.md changes: ``python tools/make_data_manifest.py ../shared/data/SOURCES.md``.
The manifest records, for each data file, its size, sha256, the pinned upstream URL, the repository and commit it
comes from (``source``: ``owner/name@commit``) and the licence that the
summary tables of SOURCES.md give for its source folder (or its section, where it says the repository states none);
a file prepared from others has, instead of a URL to download, the files it is made from (``from``: those listed
above it in its section), which ``pragmeter data fetch`` downloads and prepares it from.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from urllib.parse import quote

ROW = re.compile(r"^\| `([^`]+)` \| `([^@]+)@([0-9a-f]+):([^`]+)` \| ([\d,]+) \| `([0-9a-f]{64})` \|$")
SUMMARY_ROW = re.compile(r"^\| `([^`/]+)` \|")
# Three-column rows (local file, upstream path, sha256) of a section that names its repository once:
# "from `owner/repo` @ `commit`, folder `path/`"; a local file "prepared from" others has no upstream URL.
SHORT_ROW = re.compile(r"^\| `([^`]+)` \| (?:`([^`]+)`|prepared from [^|]+) \| `([0-9a-f]{64})` \|$")
SECTION_REPO = re.compile(r"from `([\w.-]+/[\w.-]+)` @ `([0-9a-f]{40})`, folder `([^`]*)`")
NO_LICENCE = "states no licence"  # a section's words for a source without one (evaluation only)


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
    data_dir = Path(sources_md).parent  # sizes of files listed without one (three-column rows)
    full_commits = set(re.findall(r"\b[0-9a-f]{40}\b", text))
    licence_of = licences(text)
    files = {}
    section, listed, unlicensed = None, [], False
    for line in text.splitlines():
        if m := SECTION_REPO.search(line):
            section, listed, unlicensed = m.groups(), [], False
        unlicensed = unlicensed or NO_LICENCE in line
        if (m := SHORT_ROW.match(line.strip())) and section:
            local, upstream_path, sha = m.groups()
            repo, commit, folder = section
            licence = licence_of.get(local.split("/")[0]) or (
                "none stated (evaluation only: never train on it)" if unlicensed else "not stated in SOURCES.md")
            files[local] = {"sha256": sha, "size": (data_dir / local).stat().st_size,
                            "url": (f"https://raw.githubusercontent.com/{repo}/{commit}/{quote(upstream_path)}"
                                    if upstream_path else f"prepared from the other {local.split('/')[0]}/ files"),
                            "licence": licence, "source": f"{repo}@{commit}"}
            if not upstream_path:
                files[local]["from"] = list(listed)
            listed.append(local)
            continue
        m = ROW.match(line.strip())
        if not m:
            continue
        local, repo, short, upstream_path, size, sha = m.groups()
        commit = next((c for c in full_commits if c.startswith(short)), None)
        if commit is None:
            raise SystemExit(f"no full commit for {repo}@{short}")
        url = f"https://raw.githubusercontent.com/{repo}/{commit}/{quote(upstream_path)}"
        files[local] = {"sha256": sha, "size": int(size.replace(",", "")), "url": url, "source": f"{repo}@{commit}",
                        "licence": licence_of.get(local.split("/")[0], "not stated in SOURCES.md")}
    out = Path(__file__).resolve().parents[1] / "src/pragmeter/data/manifest.json"
    out.write_text(json.dumps(files, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(files)} files -> {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/data/SOURCES.md")
