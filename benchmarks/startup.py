"""Start-up cost of the command: wall time and peak RSS of `pragmeter score "It is cold in here."`, `--help` and
`--version`, each run N times in a fresh process (median reported), plus which heavy modules the score run imports.

    nice -n 0 python benchmarks/startup.py --runs 5 [--backend onnx] [--precision fp32] [--first-use] [--out F]

Run on a quiet machine, after the README's install command (the load average before and after is recorded; figures
with load > 0.5 are not valid). ``--first-use`` first times one run on an empty cache ($PRAGMETER_CACHE in a
temporary folder; the unpacked mpnet parts are reused): the one-time encoder conversion, its progress lines and its
peak memory (the conversion's child process included). Then one warm-up run (OS file cache), and the timed runs;
the model is the shipped default (or $PRAGMETER_IMPSCORE). Peak RSS is ru_maxrss from wait4 (the largest of the
process and the children it waited for), wall time is measured around the process.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SENTENCE = "It is cold in here."
HEAVY = ("torch", "transformers", "sentence_transformers", "sklearn", "pandas", "scipy")
PROBE = ("import sys, runpy; sys.argv = ['pragmeter', 'score', {backend}'It is cold in here.']\n"
         "try:\n    runpy.run_module('pragmeter', run_name='__main__')\nexcept SystemExit:\n    pass\n"
         "print('MODULES', [m for m in {heavy!r} if m in sys.modules], file=sys.stderr)\n")


def run_once(argv: list[str], **env_extra: str) -> tuple[float, float, str]:
    """(wall seconds, peak RSS MiB, stdout + stderr) of one fresh process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), **env_extra}
    started = time.perf_counter()
    process = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    out, err = process.stdout.read(), process.stderr.read()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {err.strip()[-500:]}")
    return wall, usage.ru_maxrss / 1024, out + err


def measure(argv: list[str], runs: int) -> dict:
    walls, peaks = [], []
    for _ in range(runs):
        wall, peak, _ = run_once(argv)
        walls.append(wall)
        peaks.append(peak)
    return {"median_wall_s": round(statistics.median(walls), 3), "median_peak_rss_mib": round(statistics.median(peaks), 1),
            "wall_s": [round(w, 3) for w in walls], "peak_rss_mib": [round(p, 1) for p in peaks]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--backend", default=None, help="score --backend (default: the command's default)")
    parser.add_argument("--precision", default=None, help="score --precision (default: the command's default)")
    parser.add_argument("--first-use", action="store_true",
                        help="also time one run on an empty cache (the one-time conversion)")
    parser.add_argument("--out", default=None, help="write the figures as JSON here")
    args = parser.parse_args()

    load_before = os.getloadavg()
    cli = [sys.executable, "-m", "pragmeter"]
    backend = (["--backend", args.backend] if args.backend else []) + \
        (["--precision", args.precision] if args.precision else [])
    score = [*cli, "score", *backend, SENTENCE]
    first_use = None
    if args.first_use:
        import tempfile

        from pragmeter.encoders import cache_dir

        with tempfile.TemporaryDirectory() as empty:
            if (cache_dir() / "encoders").is_dir():  # unpacked mpnet parts: installation, not first use
                os.symlink(cache_dir() / "encoders", Path(empty) / "encoders")
            wall, peak, output = run_once(score, PRAGMETER_CACHE=empty)
        first_use = {"wall_s": round(wall, 1), "peak_rss_mib": round(peak, 1),
                     "progress_lines": [line for line in output.splitlines() if line.startswith("pragmeter:")]}
    run_once(score)  # warm-up: conversion on first use, OS file cache
    probe = PROBE.format(backend=", ".join(repr(b) for b in backend) + (", " if backend else ""), heavy=HEAVY)
    _, _, probe_out = run_once([sys.executable, "-c", probe])
    imported = next((line.split(" ", 1)[1] for line in probe_out.splitlines() if line.startswith("MODULES")), "?")
    record = {
        "first_use": first_use, "score": measure(score, args.runs), "help": measure([*cli, "--help"], args.runs),
        "version": measure([*cli, "--version"], args.runs), "score_imports_heavy": imported,
        "runs": args.runs, "backend": args.backend or "default", "precision": args.precision or "default",
        "load_avg_before": load_before,
        "load_avg_after": os.getloadavg(), "cpus": os.cpu_count(), "machine": platform.machine(),
        "python": platform.python_version(), "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "commit": subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                 text=True).stdout.strip(),
    }
    text = json.dumps(record, indent=2)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
