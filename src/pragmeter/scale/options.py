"""Options of ``pragmeter score`` for the Ray engine (kept apart so building the CLI imports nothing heavy)."""

from __future__ import annotations

import argparse

from pragmeter.cli.common import positive_int


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``pragmeter score`` that only the Ray engine reads."""
    group = parser.add_argument_group("Ray engine (--engine ray; needs the 'ray' extra)")
    group.add_argument("--engine", choices=["local", "ray"], default="local",
                       help="local: this process (default); ray: Ray Data actors, --input a file or folder, "
                            "--output a folder of parquet parts")
    group.add_argument("--id-column", default="id", help="row id column of the input (default id; made when absent)")
    group.add_argument("--ray-address", default=None,
                       help="Ray cluster to join (default: $RAY_ADDRESS, else a local instance)")
    group.add_argument("--actors", type=positive_int, default=None, help="scoring actors (default: cluster CPUs or GPUs "
                                                                "/ per-actor share)")
    group.add_argument("--cpus-per-actor", type=float, default=1, help="CPUs per actor (default 1)")
    group.add_argument("--gpus-per-actor", type=float, default=0,
                       help="GPUs per actor (default 0; >0 runs the encoder in torch on cuda); --backend and "
                            "--precision apply to the actors as to a local run (auto: torch on GPU actors)")
