"""The machine state every benchmark records with its figures, so a timing cannot hide how it was made.

    from machine import MachineWatch
    with MachineWatch() as watch:
        ...timed work...
    report["machine"] = watch.record      # CPU model and SIMD flags, threads, load before/after, others' CPU use

A speed figure is only valid on a quiet machine. Two signs are recorded: the 1-minute load average just before
the run (must be ≤ 0.5) and the CPU time that *other* processes used during the run (all busy CPU time of the
machine, from /proc/stat, minus this process's own and its waited-for children's; must average ≤ 0.5 cores).
The load average after the run is recorded too, but it includes the benchmark's own work, so it is not a test.
When either sign fails, a loud banner goes to stderr and ``record["quiet"]`` is false.
"""

from __future__ import annotations

import os
import platform
import sys
import time

QUIET_LOAD = 0.5  # 1-minute load average / cores used by others, above which timings are not valid figures
# Instruction sets that decide which kernels run (fp32 FMA, int8 VNNI, bf16, AMX); the rest of the flags do not.
SIMD_FLAGS = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
              "avx512_bf16", "avx_vnni", "amx_bf16", "amx_int8")
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "PRAGMETER_ONNX_THREADS", "OMP_WAIT_POLICY")


def cpu_description() -> dict:
    """CPU model, its SIMD flags (present and absent, from SIMD_FLAGS) and the CPUs this process may use."""
    model, flags = platform.processor() or platform.machine(), set()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                if key.strip() == "model name":
                    model = value.strip()
                elif key.strip() == "flags":
                    flags = set(value.split())
                    break
    except OSError:  # not Linux: the model from platform, flags unknown
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"model": model, "simd": [f for f in SIMD_FLAGS if f in flags],
            "simd_absent": [f for f in SIMD_FLAGS if flags and f not in flags],
            "logical_cpus": os.cpu_count(), "usable_cpus": usable, "platform": platform.platform()}


def thread_settings() -> dict:
    """Threads the numeric libraries use: torch's setting when torch is loaded, and the variables that set them."""
    settings = {name: os.environ.get(name) for name in THREAD_VARIABLES}
    if "torch" in sys.modules:
        settings["torch_threads"] = sys.modules["torch"].get_num_threads()
    return settings


def busy_cpu_seconds() -> float | None:
    """CPU seconds the whole machine spent busy since boot (all CPUs; /proc/stat), None off Linux."""
    try:
        with open("/proc/stat", encoding="utf-8") as handle:
            fields = [int(v) for v in handle.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    # user nice system idle iowait irq softirq steal ...: busy is everything but idle and iowait; steal counts
    # as busy because a hypervisor taking the CPU slows the benchmark as much as a neighbour process does.
    busy = sum(fields[:8]) - fields[3] - fields[4]
    return busy / os.sysconf("SC_CLK_TCK")


def own_cpu_seconds() -> float:
    """CPU seconds of this process and of its children that have been waited for."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


class MachineWatch:
    """Context manager around a timed run: ``record`` holds the machine, threads, load and others' CPU use."""

    def __init__(self, quiet_load: float = QUIET_LOAD, stream=None) -> None:
        self.quiet_load = quiet_load
        self.stream = stream
        self.record: dict = {}

    def __enter__(self) -> "MachineWatch":
        self.record = {"cpu": cpu_description(), "date_utc": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                       "load_before": [round(v, 2) for v in os.getloadavg()]}
        self._start = (time.monotonic(), busy_cpu_seconds(), own_cpu_seconds())
        if self.record["load_before"][0] > self.quiet_load:
            self._banner(f"load average {self.record['load_before'][0]} before the run (> {self.quiet_load})")
        return self

    def __exit__(self, *exc) -> None:
        self.finish()

    def finish(self) -> dict:
        """Close the watch (called by ``with``); returns the record."""
        started, busy_start, own_start = self._start
        wall = max(time.monotonic() - started, 1e-9)
        busy_end, own_end = busy_cpu_seconds(), own_cpu_seconds()
        record = self.record
        record["threads"] = thread_settings()  # read at the end: the benchmark may set torch's threads itself
        record["load_after"] = [round(v, 2) for v in os.getloadavg()]
        record["wall_s"] = round(wall, 2)
        record["own_cpu_cores"] = round((own_end - own_start) / wall, 2)
        others = None if busy_start is None or busy_end is None else \
            max(0.0, (busy_end - busy_start) - (own_end - own_start)) / wall
        record["others_cpu_cores"] = None if others is None else round(others, 2)
        reasons = []
        if record["load_before"][0] > self.quiet_load:
            reasons.append(f"load average {record['load_before'][0]} before the run (> {self.quiet_load})")
        if others is not None and others > self.quiet_load:
            reasons.append(f"other processes used {others:.2f} CPU cores on average during the run "
                           f"(> {self.quiet_load})")
        record["quiet"] = not reasons
        if reasons:
            self._banner("; ".join(reasons))
        return record

    def summary(self) -> str:
        """One line for logs and docs/results.md."""
        r, cpu = self.record, self.record["cpu"]
        absent = f"; no {', '.join(cpu['simd_absent'])}" if cpu["simd_absent"] else ""
        threads = ", ".join(f"{k}={v}" for k, v in r.get("threads", {}).items() if v is not None) or "defaults"
        others = r.get("others_cpu_cores")
        return (f"machine: {cpu['model']} ({' '.join(cpu['simd'])}{absent}), {cpu['usable_cpus']} usable CPUs; "
                f"threads: {threads}; load {r['load_before'][0]} before, {r.get('load_after', ['?'])[0]} after; "
                f"others used {others if others is not None else '?'} cores during the run; "
                f"{'QUIET' if r.get('quiet') else 'NOT QUIET: timings are not valid figures'}")

    def _banner(self, reason: str) -> None:
        stream = self.stream or sys.stderr
        line = "!" * 100
        print(f"{line}\n!! MACHINE NOT QUIET: {reason}.\n!! Timings from this run are NOT valid speed figures: "
              f"re-run with the machine idle (load < {self.quiet_load}).\n{line}", file=stream, flush=True)
