"""One self-contained HTML page per model from a folder of results (``pragmeter analyze report``).

The folder is searched recursively for harness results (``results.json`` with ``samples_<task>.jsonl``),
stratified results (``stratified_<name>.json``), generation checks (``generation_check.json``) and dataset
profiles (``profile_<name>.json``, ``profiles_overview.json``). Each model (the ``model`` of its results) gets
a page with every benchmark's metrics and signature, links to its per-sample logs, its stratified plots and
generation check, and the dataset profiles (shared by all pages). PNGs are embedded as base64 data URIs and
copied to ``plots/`` (under their path in the results folder); the CSS is inline; nothing is fetched from the network.
Logged samples not stratified yet are stratified into the report's own folder (``stratified/<run path>/``), never
into the results folder, and shown with the stratified files found there.

The folder may be someone else's: every value from its files is escaped, links are relative and lead only to
regular files inside the folder, only regular files inside it are read (no symbolic link, FIFO or device), names
from its files become safe file names (``io.untrusted``), and a file the page writer cannot use is marked as
unreadable in its section, naming the file and the field.
"""

from __future__ import annotations

import base64
import html
import json
import logging
import os
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from collections.abc import Iterator
from pathlib import Path

from pragmeter.version import __version__
from pragmeter.errors import DataError, PragmeterError
from pragmeter.io.untrusted import folder_inside, read_inside, refusal, safe_name
from pragmeter.provenance import read_run_record

log = logging.getLogger("pragmeter")

UNASSIGNED = "predictions"  # page for stratified files that name no model (plain predictions tables)
OWN = "stratified"  # the report's own stratification of logged samples, under the report: OWN/<run path>/

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em auto;max-width:1200px;
color:#222;padding:0 1em}
h1{font-size:1.6em;border-bottom:2px solid #345;padding-bottom:.2em}h2{margin-top:2em;color:#234}
h3{color:#345}table{border-collapse:collapse;margin:.6em 0;font-size:.9em}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}th{background:#eef2f6}
td.num{text-align:right;font-variant-numeric:tabular-nums}code{font-size:.8em;word-break:break-all;color:#444}
img{max-width:100%;border:1px solid #ddd;margin:.5em 0}.note{color:#666;font-size:.9em}
details{margin:.4em 0}summary{cursor:pointer;color:#234}nav a{margin-right:1em}
"""


@dataclass
class Found:
    """Everything found under the results folder, by model."""

    benchmarks: dict[str, list[tuple[Path, dict]]] = field(default_factory=lambda: defaultdict(list))
    stratified: dict[str, list[tuple[Path, dict]]] = field(default_factory=lambda: defaultdict(list))
    generation: dict[str, list[tuple[Path, dict]]] = field(default_factory=lambda: defaultdict(list))
    profiles: list[tuple[Path, dict]] = field(default_factory=list)
    overviews: list[tuple[Path, dict]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # one line per unreadable file: said, never dropped silently
    # model -> section -> (file, why) of each file of ours that could not be used, marked in that section of the
    # model's page (profiles: of every page); model None: a file that could not be parsed or read, on the index
    unreadable: dict[str | None, dict[str, list[tuple[Path, str]]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list)))

    def models(self) -> list[str]:
        marked = {m for m, sections in self.unreadable.items() if m is not None and set(sections) - {"profiles"}}
        return sorted(set(self.benchmarks) | set(self.stratified) | set(self.generation) | marked)


def model_name(settings: dict | None) -> str:
    if not settings:
        return UNASSIGNED
    return str(settings.get("model") or settings.get("backend") or UNASSIGNED)


def page_names(models: list[str]) -> dict[str, str]:
    """Model -> its page's file name: the safe name (``io.untrusted.safe_name``), and where several models share it
    in any case (``Llama`` and ``llama``, one file on macOS and Windows; or a model called ``index``) that and a short
    hash of the name, so no model's page replaces another's or the index."""
    import hashlib
    from collections import Counter

    shared = Counter([*(safe_name(m).lower() for m in models), "index"])  # index.html is the index's
    return {m: f"{safe_name(m)}-{hashlib.sha256(m.encode()).hexdigest()[:8]}.html"
            if shared[safe_name(m).lower()] > 1 else f"{safe_name(m)}.html" for m in models}


NUMBER = (int, float)
MAYBE_NUMBER = (int, float, type(None))
MAYBE_OBJECT = (dict, type(None))


def _block_shape(prefix: str) -> dict:
    """A profile's scores and diversity block (overall, or one label value)."""
    return {prefix: dict, f"{prefix}.scores": dict, f"{prefix}.diversity": dict, f"{prefix}.diversity.mean": object,
            **{f"{prefix}.scores.{key}": object for key in ("n", "mean", "sd", "q50")}}


# What the page writer reads of each kind of file: dotted field -> expected type(s), a field's container listed
# before it; "*" is every item of a list or value of an object, a trailing "?" marks an optional field. A file
# that does not match is skipped with a warning naming the field, not a traceback that loses the whole report.
SHAPES: dict[str, dict[str, type | tuple[type, ...]]] = {
    "results.json": {"model?": MAYBE_OBJECT, "results": dict, "results.*": dict, "results.*.metrics?": dict,
                "results.*.headline?": (str, type(None)), "run.command?": (list, type(None)), "run.command.*": str},
    "pragmeter-stratified": {
        "model?": MAYBE_OBJECT, "name": object, "n": int, "accuracy": MAYBE_NUMBER, "ci_low": MAYBE_NUMBER,
        "ci_high": MAYBE_NUMBER, "source": str, "plots?": list, "plots.*": str, "bin_edges": list,
        "bin_edges.*": NUMBER, "bins": list, "bins.*": dict, "bins.*.low": NUMBER, "bins.*.high": NUMBER,
        "bins.*.n": int, "bins.*.correct": int,
        **{f"bins.*.{key}": MAYBE_NUMBER for key in ("accuracy", "ci_low", "ci_high")},
        "trend": dict, "trend.spearman_bin_centre_vs_accuracy": dict, "trend.logistic_slope_per_score_unit": dict,
        **{f"trend.spearman_bin_centre_vs_accuracy.{key}": MAYBE_NUMBER for key in ("rho", "p_value")},
        **{f"trend.logistic_slope_per_score_unit.{key}": MAYBE_NUMBER for key in ("slope", "ci_low", "ci_high")}},
    "pragmeter-generation-check": {
        "model?": MAYBE_OBJECT, "plots?": list, "plots.*": str, "levels": list, "levels.*": dict,
        **{f"levels.*.{key}": object for key in ("level", "mean", "sd_over_runs")},
        "kendall_tau_per_group": dict,
        **{f"kendall_tau_per_group.{key}": object for key in ("mean", "sd", "n", "share_perfect_order")},
        "kendall_tau_levels": object, "runs": object, "topics": list, "n_valid": object, "n_requests": object,
        "samples_file": str},
    "pragmeter-profile": {
        "name": object, "n_texts": int, "model": object, "plots": list, "plots.*": str, **_block_shape("overall"),
        "groupings": dict, "groupings.*": dict, **_block_shape("groupings.*.*"), "comparisons": list,
        "comparisons.*": dict, "comparisons.*.n_a": int, "comparisons.*.n_b": int,
        **{f"comparisons.*.{key}": object for key in ("grouping", "a", "b", "difference", "ci_low", "ci_high",
                                                       "p_value")},
        "pairs": dict, "pairs.*": dict, "pairs.*.n_pairs": int,
        **{f"pairs.*.{key}": object for key in ("difference", "ci_low", "ci_high", "p_value")}},
    "pragmeter-profile-overview": {
        "plots?": list, "plots.*": str, "datasets": list, "datasets.*": dict, "datasets.*.name": object,
        "datasets.*.n_texts": object, "datasets.*.scores": dict, "datasets.*.scores.mean": object,
        "datasets.*.scores.sd": object, "datasets.*.implicit_subset": MAYBE_OBJECT,
        "datasets.*.implicit_subset.scores?": dict, "datasets.*.diversity": dict, "datasets.*.diversity.mean": object},
}
TYPE_NAMES = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "an integer",
              float: "a number", type(None): "null"}
# The section of a page that shows each kind of file, and the kind of a file by its name (for one that cannot
# be parsed, or may not be read).
SECTIONS = {"results.json": "benchmarks", "pragmeter-stratified": "stratified",
            "pragmeter-generation-check": "generation", "pragmeter-profile": "profiles",
            "pragmeter-profile-overview": "profiles"}


def _section_by_name(path: Path) -> str | None:
    name = path.name
    if name == "results.json":
        return "benchmarks"
    if name == "generation_check.json":
        return "generation"
    if name.startswith("stratified_"):
        return "stratified"
    if name.startswith("profile_") or name == "profiles_overview.json":
        return "profiles"
    return None


def _stratified_problem(payload: dict) -> str | None:
    """What the shape cannot say of a stratified file: its bin edges are there, and a trend statistic that has a
    value has its p-value or interval too."""
    if not payload["bin_edges"]:
        return "field 'bin_edges' is empty, expected the bin edges"
    trend = payload["trend"]
    for block, lead, needs in (("spearman_bin_centre_vs_accuracy", "rho", ("p_value",)),
                               ("logistic_slope_per_score_unit", "slope", ("ci_low", "ci_high"))):
        if trend[block][lead] is not None:
            for key in needs:
                if trend[block][key] is None:
                    return f"field 'trend.{block}.{key}' is null, expected a number ({lead} has a value)"
    return None


RULES = {"pragmeter-stratified": _stratified_problem}  # checks beyond SHAPES, by kind


def _children(name: str, value, part: str) -> list[tuple[str, object]]:
    """Field ``part`` of the container ``value`` (named ``name``) with its name; for "*" every item or value."""
    if part == "*" and isinstance(value, list):
        return [(f"{name}[{i}]", item) for i, item in enumerate(value)]
    if part == "*" and isinstance(value, dict):
        return [(f"{name}.{key}".lstrip("."), item) for key, item in value.items()]
    if isinstance(value, dict) and part in value:
        return [(f"{name}.{part}".lstrip("."), value[part])]
    return []


def shape_error(payload: dict, shape: dict[str, type | tuple[type, ...]]) -> str | None:
    """The first field of ``payload`` that does not match ``shape`` (see SHAPES), in words; None when all do."""
    for spec, expected in shape.items():
        *parents, last = spec.removesuffix("?").split(".")
        found = [("", payload)]
        for part in parents:  # a container of the wrong type was said by its own entry; an absent one holds nothing
            found = [child for name, value in found for child in _children(name, value, part)]
        for name, value in found:
            if last != "*" and isinstance(value, dict) and last not in value and not spec.endswith("?"):
                return f"field {f'{name}.{last}'.lstrip('.')!r} is missing"
            for field_name, item in _children(name, value, last):
                if not isinstance(item, expected):
                    types = expected if isinstance(expected, tuple) else (expected,)
                    return (f"field {field_name!r} is {TYPE_NAMES.get(type(item), type(item).__name__)}, expected "
                            + " or ".join(TYPE_NAMES[t] for t in types))
    return None


def _under(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or lies in it, as written (absolute, links not followed)."""
    path, folder = Path(os.path.abspath(path)), Path(os.path.abspath(folder))
    return path == folder or folder in path.parents


def _in_a_report(root: Path, path: Path) -> bool:
    """Whether ``path`` lies in a report's own stratification inside ``root`` (``<report>/stratified/``, beside that
    report's ``index.html``): it belongs to that report, and is not read as a result of the folder."""
    for folder in path.parents:
        if folder == root:
            return False
        if folder.name == OWN and (folder.parent / "index.html").is_file():
            return True
    return False


def scan(root: Path, skip: Path | None = None) -> Found:
    """Every file of ours under ``root`` (not under ``skip`` nor in a report's own stratification), by model; only
    regular files inside ``root`` are read. A file that cannot be read or used is said in one line (``skipped``) and,
    when its name or kind says which section shows it, marked there (``unreadable``)."""
    from pragmeter.io import read_json

    found = Found()

    def unusable(path: Path, problem: str, section: str | None, model: str | None = None) -> None:
        found.skipped.append(f"{path}: {problem}; skipped")
        if section is not None:
            found.unreadable[model][section].append((path, problem))

    for path in sorted(root.rglob("*.json")):
        if skip is not None and _under(path, skip) or _in_a_report(root, path):
            continue
        problem = refusal(root, path)
        if problem:
            unusable(path, problem, _section_by_name(path))
            continue
        try:
            payload = read_json(path)
        except DataError as error:
            found.skipped.append(f"{error}; skipped")
            section = _section_by_name(path)
            if section is not None:
                found.unreadable[None][section].append((path, str(error).removeprefix(f"{path}: ")))
            continue
        if not isinstance(payload, dict):
            if path.name == "results.json":  # ours by its name: said, not passed over silently
                unusable(path, f"holds {TYPE_NAMES.get(type(payload), 'no object')}, not an object with field "
                         "'results'", "benchmarks")
            continue  # some other program's JSON
        kind = "results.json" if path.name == "results.json" else payload.get("kind")
        if not isinstance(kind, str) or kind not in SHAPES:
            continue
        model = model_name(payload.get("model") if isinstance(payload.get("model"), dict) else None)
        problem = shape_error(payload, SHAPES[kind]) or (RULES[kind](payload) if kind in RULES else None)
        if problem:
            unusable(path, problem, SECTIONS[kind], model)
        elif kind == "results.json":
            found.benchmarks[model].append((path, payload))
        elif kind == "pragmeter-stratified":
            found.stratified[model].append((path, payload))
        elif kind == "pragmeter-generation-check":
            found.generation[model].append((path, payload))
        elif kind == "pragmeter-profile":
            found.profiles.append((path, payload))
        elif kind == "pragmeter-profile-overview":
            found.overviews.append((path, payload))
    return found


def _run_folder(results_dir: Path, output: Path, path: Path) -> Path:
    """The folder of the run a stratified file belongs to: its own folder, or for the report's own stratification
    (``output/stratified/<run path>/``) that run's folder in the results folder."""
    try:
        return results_dir / Path(os.path.abspath(path.parent)).relative_to(os.path.abspath(output / OWN))
    except ValueError:
        return path.parent


def scan_report(results_dir: Path, output: Path) -> Found:
    """What the report shows: the files of the results folder (not the report folder, when it is inside) and the
    report's own stratification, each stratified file once (one the folder has beside its log is shown instead of
    the report's own of that log)."""
    found = scan(results_dir, skip=output)
    own = output / OWN
    if not own.is_dir() or own.is_symlink() or _under(results_dir, own):
        return found
    mine = scan(own)
    for model, entries in mine.stratified.items():
        found.stratified[model] += [(path, payload) for path, payload in entries
                                    if not os.path.lexists(_run_folder(results_dir, output, path) / path.name)]
    for model, sections in mine.unreadable.items():
        if sections.get("stratified"):
            found.unreadable[model]["stratified"] += sections["stratified"]
    found.skipped += mine.skipped
    return found


# ------------------------------------------------------------------------------------------------ rendering
_CONTROLS = {code: "\ufffd" for code in [*range(0x00, 0x09), 0x0b, 0x0c, *range(0x0e, 0x20), 0x7f]}


def _e(value) -> str:
    """A value as HTML text or attribute: escaped, and control characters (which HTML does not allow) shown as �."""
    return html.escape(str(value), quote=True).translate(_CONTROLS)


def _number(value, digits: int = 4) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    if _is_estimate(value):
        from pragmeter.metrics.intervals import format_estimate

        return _e(format_estimate(value, digits))  # a metric over runs: mean ± SD [95% CI], not the raw dict
    return _e(value)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_estimate(value) -> bool:
    """A metric over runs that ``format_estimate`` shows as mean ± SD [95% CI]: numbers where it needs them (any
    other dictionary is shown as text)."""
    if not isinstance(value, dict) or "difference" in value or not (_is_number(value.get("mean"))
                                                                    and _is_number(value.get("sd"))):
        return False
    interval = value.get("ci95")
    return interval is None or (isinstance(interval, list) and len(interval) >= 2
                                and all(x is None or _is_number(x) for x in interval[:2]))


def _table(header: list[str], rows: list[list]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(
        f"<td class=num>{_number(c)}</td>" if isinstance(c, (int, float)) and not isinstance(c, bool) or c is None
        or _is_estimate(c) else f"<td>{c if isinstance(c, Markup) else _e(c)}</td>" for c in row) + "</tr>"
        for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


class Markup(str):
    """HTML that is inserted as is (already escaped)."""


MAX_PLOT_BYTES = 50_000_000
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _href(path: str) -> str:
    """A relative link as an attribute value: percent-encoded, so no part of a file name reads as a scheme
    (``javascript:``), a query or a fragment."""
    from urllib.parse import quote

    return _e(quote(path.replace(os.sep, "/"), safe="/"))


class PageWriter:
    """The pages of the results folder ``root`` written into ``output``."""

    def __init__(self, output: Path, root: Path, models: list[str] | None = None):
        self.output = output
        self.root = root
        self.pages = page_names(models or [])

    def shown(self, path: Path) -> str:
        """A file of the results folder as the page names it: its path inside the folder."""
        try:
            return Path(os.path.abspath(path)).relative_to(os.path.abspath(self.root)).as_posix()
        except ValueError:
            return str(path)

    def image(self, folder: Path, name: str, alt: str) -> str:
        """The plot ``name`` of a file in ``folder``: embedded, and copied to ``plots/`` under its path in the results
        folder (two runs' plots of one name stay apart), when it is a PNG that is a regular file inside the folder
        (or inside the report's own stratification, which is in the report already); else a note saying why it is
        not shown."""
        from pragmeter.io import atomic_path

        path = folder / name
        own = _under(path, self.output / OWN)
        try:
            data = read_inside(self.output / OWN if own else self.root, path, MAX_PLOT_BYTES)
        except DataError as error:
            return f"<p class=note>plot {_e(name)} not shown: {_e(str(error).removeprefix(f'{path}: '))}</p>"
        if not data.startswith(PNG_SIGNATURE):
            return f"<p class=note>plot {_e(name)} not shown: not a PNG file</p>"
        encoded = base64.b64encode(data).decode("ascii")
        if own:
            return f'<img alt="{_e(alt)}" src="data:image/png;base64,{encoded}">'
        relative = path.resolve().relative_to(self.root.resolve())
        copy = folder_inside(self.output, Path("plots") / relative.parent) / relative.name
        with atomic_path(copy) as tmp:  # replaces whatever is there (a planted link too), never writes through it
            tmp.write_bytes(data)
        return f'<img alt="{_e(alt)}" src="data:image/png;base64,{encoded}">'

    def readable(self, target: Path) -> bool:
        """Whether a page may link to ``target``: a regular file inside the results folder or the report."""
        return refusal(self.root, target) is None or refusal(self.output, target) is None

    def link(self, target: Path, text: str) -> Markup:
        """A relative link to ``target`` with ``text``; ``text`` alone when ``target`` is not :meth:`readable`."""
        if not self.readable(target):
            return Markup(_e(text))
        relative = os.path.relpath(os.path.abspath(target), os.path.abspath(self.output))
        return Markup(f'<a href="{_href(relative)}">{_e(text)}</a>')

    def unreadable(self, entries: list[tuple[Path, str]]) -> str:
        """The files of a section that could not be used, each with why (the field and what it holds)."""
        return "".join(f"<p class=note><b>unreadable</b>: <code>{_e(self.shown(path))}</code>: {_e(problem)}</p>"
                       for path, problem in entries)

    # -- sections ---------------------------------------------------------------------------------------
    def benchmarks(self, runs: list[tuple[Path, dict]], unreadable: list[tuple[Path, str]]) -> str:
        if not runs:
            return self.unreadable(unreadable) or "<p class=note>No benchmark results for this model.</p>"
        rows, details = [], []
        for path, payload in runs:
            run = read_run_record(payload)
            command = " ".join(map(str, run.command)) if isinstance(run.command, list) else str(run.command or "")
            for task, result in payload["results"].items():
                samples = path.parent / f"samples_{task}.jsonl"
                value = result.get("metrics", {}).get(result.get("headline"))
                rows.append([Markup(f"<b>{_e(task)}</b>"), result.get("mode", "generate"), result.get("headline", ""),
                             value, result.get("n_items"),
                             result.get("invalid"), result.get("errors"),
                             self.link(samples, samples.name) if self.readable(samples) else "not logged",
                             self.link(path, "results.json"), Markup(f"<code>{_e(result.get('signature', ''))}</code>")])
                numbers = [[k, v] for k, v in result.get("metrics", {}).items()
                           if isinstance(v, (int, float)) or (isinstance(v, dict) and "mean" in v)]
                details.append(f"<details><summary>{_e(task)}: all metrics ({_e(path.parent.name)})</summary>"
                               + _table(["metric", "value"], numbers)
                               + f"<p class=note>date {_e(run.date)}, commit <code>{_e(run.commit or '')}</code>, "
                                 f"command <code>{_e(command)}</code></p></details>")
        table = _table(["task", "mode", "headline", "value", "items", "invalid", "errors", "per-sample log", "results",
                        "signature"], rows)
        return table + "".join(details) + self.unreadable(unreadable)

    def stratified(self, entries: list[tuple[Path, dict]], unreadable: list[tuple[Path, str]]) -> str:
        if not entries:
            return self.unreadable(unreadable) or (
                "<p class=note>No stratified results: run <code>pragmeter analyze stratify --input RESULTS</code> on "
                "results with logged samples.</p>")
        parts = []
        for path, payload in entries:
            source = Path(payload["source"])
            beside = _run_folder(self.root, self.output, path) / source.name  # the log, when it is still there
            trend = payload["trend"]
            rho, slope = trend["spearman_bin_centre_vs_accuracy"], trend["logistic_slope_per_score_unit"]
            rows = [[f"[{b['low']:.2f}, {b['high']:.2f}{']' if b['high'] == payload['bin_edges'][-1] else ')'}",
                     b["n"], b["correct"], b["accuracy"], b["ci_low"], b["ci_high"]] for b in payload["bins"]]
            slope_text = ("–" if slope["slope"] is None else
                          f"{slope['slope']:+.3f} [{slope['ci_low']:+.3f}, {slope['ci_high']:+.3f}]")
            rho_text = "–" if rho["rho"] is None else f"{rho['rho']:+.3f} (p = {rho['p_value']:.3g})"
            parts.append(
                f"<h3>{_e(payload['name'])}" + (f" <span class=note>({_e(payload['filter'])})</span>"
                                                if payload.get("filter") else "") + "</h3>"
                + "".join(self.image(path.parent, png, f"accuracy by ImpScore bin: {payload['name']}")
                          for png in payload.get("plots", []))
                + f"<p>accuracy {_number(payload['accuracy'])} over {payload['n']:,} items "
                  f"[{_number(payload['ci_low'], 3)}, {_number(payload['ci_high'], 3)}]; Spearman ρ(bin centre, "
                  f"accuracy) {_e(rho_text)}; logistic slope per score unit {_e(slope_text)}.</p>"
                + _table(["ImpScore bin", "items", "correct", "accuracy", "Wilson 95% low", "high"], rows)
                + f"<p class=note>ImpScore model <code>{_e(payload.get('impscore_model') or 'scores from input')}"
                  f"</code>; source {self.link(beside if self.readable(beside) else source, source.name)}</p>")
        return "".join(parts) + self.unreadable(unreadable)

    def generation(self, entries: list[tuple[Path, dict]], unreadable: list[tuple[Path, str]]) -> str:
        if not entries:
            return self.unreadable(unreadable) or (
                "<p class=note>No generation check: run <code>pragmeter analyze generation-check</code>.</p>")
        parts = []
        for path, payload in entries:
            rows = [[lv["level"], lv["mean"], lv["sd_over_runs"]] for lv in payload["levels"]]
            tau = payload["kendall_tau_per_group"]
            parts.append(
                "".join(self.image(path.parent, png, "generation check") for png in payload.get("plots", []))
                + _table(["requested level", "mean ImpScore", "SD over runs"], rows)
                + f"<p>Kendall τ between requested and scored order: {_number(tau['mean'], 3)} "
                  f"(SD {_number(tau['sd'], 3)}, {_number(tau['n'])} groups; perfectly ordered "
                  f"{_number(tau['share_perfect_order'], 3)}); over level means {_number(payload['kendall_tau_levels'], 3)}. "
                  f"{_number(payload['runs'])} runs × {len(payload['topics'])} topics, {_number(payload['n_valid'])} "
                  f"valid of {_number(payload['n_requests'])} answers; "
                  + self.link(path.parent / payload["samples_file"], "generations") + ".</p>")
        return "".join(parts) + self.unreadable(unreadable)

    def profiles(self, found: Found) -> str:
        unreadable = [entry for sections in found.unreadable.values() for entry in sections.get("profiles", [])]
        if not found.profiles and not found.overviews:
            return self.unreadable(unreadable) or (
                "<p class=note>No dataset profiles: run <code>pragmeter analyze profile --input DATASET</code>.</p>")
        parts = []
        for path, payload in found.overviews:
            parts.append("".join(self.image(path.parent, png, "implicitness of datasets")
                                 for png in payload.get("plots", [])))
            rows = [[d["name"], d["n_texts"], d["scores"]["mean"], d["scores"]["sd"],
                     (d["implicit_subset"] or {}).get("scores", {}).get("mean"), d["diversity"]["mean"]]
                    for d in payload["datasets"]]
            parts.append(_table(["dataset", "texts", "mean ImpScore", "SD", "implicit subset mean",
                                 "mean pragmatic distance"], rows))
        for path, payload in found.profiles:
            rows = [["all", "", payload["overall"]["scores"]["n"], payload["overall"]["scores"]["mean"],
                     payload["overall"]["scores"]["sd"], payload["overall"]["scores"]["q50"],
                     payload["overall"]["diversity"]["mean"]]]
            for grouping, values in payload["groupings"].items():
                for value, block in values.items():
                    rows.append([grouping, value, block["scores"]["n"], block["scores"]["mean"], block["scores"]["sd"],
                                 block["scores"]["q50"], block["diversity"]["mean"]])
            comparisons = [[f"{c['grouping']}: {c['a']} − {c['b']}", c["difference"], c["ci_low"], c["ci_high"],
                            c["p_value"], f"{c['n_a']:,} vs {c['n_b']:,}"] for c in payload["comparisons"]]
            comparisons += [[name, p["difference"], p["ci_low"], p["ci_high"], p["p_value"], f"{p['n_pairs']:,} pairs"]
                            for name, p in payload["pairs"].items()]
            parts.append(
                f"<details open><summary><b>{_e(payload['name'])}</b>: {payload['n_texts']:,} texts, mean ImpScore "
                f"{_number(payload['overall']['scores']['mean'])}</summary>"
                f"<p class=note>{_e(payload.get('description', ''))}</p>"
                + "".join(self.image(path.parent, png, f"profile of {payload['name']}") for png in payload["plots"])
                + _table(["grouping", "value", "n", "mean", "SD", "median", "mean pragmatic distance"], rows)
                + (_table(["difference (95% CI)", "estimate", "low", "high", "p", "n"], comparisons) if comparisons else "")
                + f"<p class=note>sampling <code>{_e(json.dumps(payload.get('sampling', {})))}</code>; ImpScore "
                  f"<code>{_e(payload['model'])}</code></p></details>")
        return "".join(parts) + self.unreadable(unreadable)

    def page(self, model: str, found: Found, others: list[str]) -> str:
        nav = " ".join(f'<a href="{_href(self.pages[m])}">{_e(m)}</a>' for m in others)
        unreadable = found.unreadable.get(model, {})
        settings = next((p.get("model") for _, p in found.benchmarks.get(model, [])), None)
        generated = datetime.now(timezone.utc).isoformat(timespec="seconds")
        return (
            f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>pragmeter report: {_e(model)}</title>"
            f"<style>{CSS}</style></head><body><nav><a href=index.html>all models</a> {nav}</nav>"
            f"<h1>pragmeter report: {_e(model)}</h1>"
            + (f"<p class=note>model settings <code>{_e(json.dumps(settings))}</code></p>" if settings else "")
            + f"<p class=note>generated {generated} by pragmeter {__version__}</p>"
            + "<h2>Benchmarks</h2>" + self.benchmarks(found.benchmarks.get(model, []), unreadable.get("benchmarks", []))
            + "<h2>Accuracy by implicitness</h2>"
            + self.stratified(found.stratified.get(model, []), unreadable.get("stratified", []))
            + "<h2>Generation check</h2>"
            + self.generation(found.generation.get(model, []), unreadable.get("generation", []))
            + "<h2>Dataset profiles</h2>" + self.profiles(found)
            + "</body></html>\n")

    def index(self, models: list[str], found: Found) -> str:
        rows = [[self.link(self.output / self.pages[m], m), len(found.benchmarks.get(m, [])),
                 len(found.stratified.get(m, [])), len(found.generation.get(m, []))] for m in models]
        unread = [entry for section, entries in found.unreadable.get(None, {}).items() if section != "profiles"
                  for entry in entries]
        return (f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>pragmeter reports</title>"
                f"<style>{CSS}</style></head><body><h1>pragmeter reports</h1>"
                + _table(["model", "result folders", "stratified", "generation checks"], rows)
                + self.unreadable(unread)
                + f"<p class=note>{len(found.profiles)} dataset profile(s) on every page.</p></body></html>\n")


def make_output(results_dir: Path, output: Path) -> None:
    """Make the report folder. Inside the results folder (the default), each of its parts there was made by the
    folder's author: one that is a symbolic link would carry the report elsewhere, so it is refused."""
    inside = Path(os.path.abspath(output))
    if Path(os.path.abspath(results_dir)) in inside.parents:
        folder_inside(results_dir, inside.relative_to(os.path.abspath(results_dir)))
    output.mkdir(parents=True, exist_ok=True)


def render(results_dir: Path, output: Path) -> list[Path]:
    """Write one page per model plus ``index.html`` into ``output``; return the page paths."""
    from pragmeter.io import atomic_path

    if not results_dir.is_dir():
        raise PragmeterError(f"{results_dir}: not a folder")
    found = scan_report(results_dir, output)
    for line in found.skipped:
        log.warning(f"warning: {line}")
    models = found.models()
    if not models and not found.profiles and not found.overviews:
        raise PragmeterError(f"{results_dir}: no results.json, stratified_*.json, generation_check.json or "
                             "profile_*.json found")
    if not models:
        models = ["datasets"]
    writer = PageWriter(output, results_dir, models)
    make_output(results_dir, output)
    pages = []
    for model in models:
        path = output / writer.pages[model]
        with atomic_path(path) as tmp:
            tmp.write_text(writer.page(model, found, [m for m in models if m != model]), encoding="utf-8")
        pages.append(path)
    with atomic_path(output / "index.html") as tmp:
        tmp.write_text(writer.index(models, found), encoding="utf-8")
    return pages


# The label whose items the paper's accuracy counts, per task (detection rate on hateful texts).
GOLD_FILTER = {"hate_detection": "yes"}


def stratify_logged_samples(results_dir: Path, output: Path, impscore: str | None = None, device: str | None = None,
                            batch_size: int | None = None, backend: str = "auto", precision: str = "auto") -> int:
    """Stratify every per-sample log of ``results_dir`` that has texts and no ``stratified_<task>.json``, neither
    beside it nor in the report's own folder for its run (``output/stratified/<run path>/``, where this writes: the
    results folder may be someone else's, or read-only); return how many."""
    from pragmeter.analysis import stratify

    from pragmeter.io import read_records

    done, model = 0, None
    for results in sorted(results_dir.rglob("results.json")):
        if _under(results, output):
            continue  # the report folder inside the results folder holds no run
        run = results.parent
        relative = Path(OWN, *(safe_name(part) for part in run.relative_to(results_dir).parts))
        try:
            logs = stratify.sample_logs(run)
        except DataError as error:  # e.g. a truncated results.json: said here, and again by the page writer
            log.warning(f"warning: {error}; its sample logs are not stratified")
            continue
        for sample_log, settings in logs:
            task = sample_log.stem.removeprefix("samples_")
            if any(os.path.lexists(stratify.stratified_path(folder, task)) for folder in (run, output / relative)):
                continue
            try:
                records = read_records(sample_log)
                if not records or not isinstance(records[0][1].get("text"), str):
                    continue  # a task that logs no text cannot be stratified
                predictions = stratify.from_samples(sample_log, GOLD_FILTER.get(task), settings)
            except DataError as error:
                log.warning(f"warning: {error}; not stratified")
                continue
            if not predictions.texts:
                continue
            if model is None:
                from pragmeter.impscore.model import ImpScore

                model = ImpScore.load(impscore, backend=backend, precision=precision, cache=True, device=device,
                                      batch_size=batch_size)
            scores = stratify.score_predictions(predictions, model)
            stratify.write_stratified(predictions, scores, folder_inside(output, relative), model.signature())
            done += 1
    return done


def make_report(results_dir: Path, output: str | Path | None = None, overwrite: bool = False, stratify: bool = True,
                impscore: str | None = None, device: str | None = None, batch_size: int | None = None,
                backend: str = "auto", precision: str = "auto") -> Iterator[Path]:
    """``pragmeter analyze report``: the pages of ``results_dir`` written into ``output`` (default
    ``results_dir/report``; ``index.html`` there is refused unless ``overwrite``), its logged samples stratified first
    into ``output/stratified/`` unless not ``stratify`` (:func:`stratify_logged_samples`, with that ImpScore model);
    nothing is written into ``results_dir`` outside ``output``. Yields each page's path and says the counts and the
    index (the ``pragmeter`` logger)."""
    from pragmeter.io import check_output

    output = Path(output) if output else results_dir / "report"
    check_output(output / "index.html", overwrite)
    if results_dir.is_dir():
        make_output(results_dir, output)  # before any scoring
    if stratify and results_dir.is_dir():
        count = stratify_logged_samples(results_dir, output, impscore, device, batch_size, backend, precision)
        if count:
            log.info(f"stratified {count} per-sample log(s)")
    yield from render(results_dir, output)
    log.info(f"index: {output / 'index.html'}")
