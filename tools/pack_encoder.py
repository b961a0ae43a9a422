"""Move an encoder folder to a machine that takes only small transfers: ``pack`` writes its weights as int8 codes
with one fp16 scale per group of 128 inputs (each matrix; vectors stay fp32) in shards under ``--shard-bytes``,
beside the folder's small files and a manifest with every shard's sha256; ``unpack`` checks the shards against the
manifest and writes the folder again with fp32 weights (the codes times their scales).

    python tools/pack_encoder.py pack ~/.cache/pragmeter/encoders/all-mpnet-base-v2 packed/ --shard-bytes 50000000
    python tools/pack_encoder.py unpack packed/ $PRAGMETER_CACHE/encoders/all-mpnet-base-v2

The unpacked weights differ from the packed ones by at most half a step of their group's scale (``max|w| / 254`` of
its 128 weights). A model trained over the unpacked copy and shipped as its changes (``interpreter/shipped.py``) is
applied to the real base where it loads, so its figures are measured there again, not taken from the copy.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from pragmeter.data.root import sha256_of as sha256
from pragmeter.io.atomic import replace_folder

GROUP = 128
MANIFEST = "pack.json"
WEIGHTS = "model.safetensors"
FORMAT = "pragmeter-int8-groups-1"


def quantize(tensor):
    """(int8 codes, fp16 scales per group of GROUP along the last axis) of a 2-D float tensor."""
    import torch

    rows, width = tensor.shape
    groups = tensor.float().reshape(rows, width // GROUP, GROUP)
    scale = (groups.abs().amax(dim=-1, keepdim=True) / 127).clamp_min(1e-12).half()
    codes = torch.round(groups / scale.float()).clamp(-127, 127).to(torch.int8)
    return codes.reshape(rows, width), scale.reshape(rows, width // GROUP)


def dequantize(codes, scale):
    rows, width = codes.shape
    groups = codes.float().reshape(rows, width // GROUP, GROUP) * scale.float().reshape(rows, width // GROUP, 1)
    return groups.reshape(rows, width)


def pack(folder: Path, out: Path, shard_bytes: int) -> dict:
    from safetensors.torch import load_file, save_file

    weights = load_file(str(folder / WEIGHTS))
    out.mkdir(parents=True, exist_ok=False)
    for path in folder.rglob("*"):  # everything but the weights, as it is
        if path.is_file() and path.name != WEIGHTS:
            target = out / "files" / path.relative_to(folder)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    shards, current, size, kinds = [], {}, 0, {}
    for name, tensor in weights.items():
        if tensor.dim() == 2 and tensor.is_floating_point() and tensor.shape[1] % GROUP == 0:
            codes, scale = quantize(tensor)
            pieces, kinds[name] = {f"{name}.codes": codes, f"{name}.scale": scale}, "int8-groups"
        else:
            pieces, kinds[name] = {name: tensor.contiguous()}, "as-is"
        need = sum(t.numel() * t.element_size() for t in pieces.values())
        if current and size + need > shard_bytes:
            shards.append(current)
            current, size = {}, 0
        current.update(pieces)
        size += need
    shards.append(current)
    files = []
    for index, shard in enumerate(shards):
        path = out / f"weights-{index}.safetensors"
        save_file(shard, str(path))
        files.append({"file": path.name, "sha256": sha256(path)})
    manifest = {"format": FORMAT, "group": GROUP, "source": folder.name, "source_sha256": sha256(folder / WEIGHTS),
                "tensors": kinds, "shards": files}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return manifest


def unpack(packed: Path, folder: Path) -> Path:
    """The folder again (weights in fp32) from ``packed`` (its manifest, files and shards); a SystemExit naming the
    file when a shard is missing or its sha256 differs from the manifest's."""
    from safetensors.torch import load_file, save_file

    manifest = json.loads((packed / MANIFEST).read_text(encoding="utf-8"))
    if manifest.get("format") != FORMAT:
        raise SystemExit(f"{packed / MANIFEST}: format {manifest.get('format')!r}, expected {FORMAT!r}")
    stored = {}
    for shard in manifest["shards"]:
        if Path(str(shard["file"])).name != shard["file"]:  # a name read from the manifest stays inside ``packed``
            raise SystemExit(f"{packed / MANIFEST}: shard {shard['file']!r} is not a file name in {packed}")
        path = packed / shard["file"]
        if not path.is_file() or sha256(path) != shard["sha256"]:
            raise SystemExit(f"{path}: missing or not the file the manifest names (sha256 differs)")
        stored.update(load_file(str(path)))
    weights = {}
    for name, kind in manifest["tensors"].items():
        weights[name] = (dequantize(stored[f"{name}.codes"], stored[f"{name}.scale"]) if kind == "int8-groups"
                         else stored[name])

    def write(staging: Path) -> None:
        shutil.copytree(packed / "files", staging, dirs_exist_ok=True)
        save_file(weights, str(staging / WEIGHTS), metadata={"format": "pt"})

    return replace_folder(folder, write)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    packing = verbs.add_parser("pack", help="an encoder folder into int8 shards and a manifest")
    packing.add_argument("folder", type=Path)
    packing.add_argument("out", type=Path, help="a new folder")
    packing.add_argument("--shard-bytes", type=int, default=50_000_000, help="largest shard (default 50 MB)")
    unpacking = verbs.add_parser("unpack", help="a packed folder back into an encoder folder (fp32 weights)")
    unpacking.add_argument("packed", type=Path)
    unpacking.add_argument("folder", type=Path)
    args = parser.parse_args(argv)
    if args.verb == "pack":
        manifest = pack(args.folder, args.out, args.shard_bytes)
        print(f"{args.out}: {len(manifest['shards'])} shards", file=sys.stderr)
    else:
        print(unpack(args.packed, args.folder))


if __name__ == "__main__":
    main()
