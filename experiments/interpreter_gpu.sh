#!/usr/bin/env bash
# The interpreter's multi-source recipe on a GPU machine that is reached only through transfers of a few tens of MB
# (and has no internet): the base encoder travels packed (tools/pack_encoder.py: int8 codes, one fp16 scale per 128
# weights) in pieces over several calls, with an archive of the data files the recipe reads, into a stash that
# outlives each call; the trained run is shipped there (low-rank changes over the unpacked base) and comes back as a
# folder of a few tens of MB. Where it loads, the shipped form is applied to the real base, so its figures are
# measured again there.
#
#   bash experiments/interpreter_gpu.sh collect                # keep what this call carried (.transfer/)
#   bash experiments/interpreter_gpu.sh smoke                  # the whole path on random weights of the same shapes
#   bash experiments/interpreter_gpu.sh train ARGS...          # interpreter_multisource.py ARGS on the unpacked base
#   bash experiments/interpreter_gpu.sh ship RUN RANKS DEST    # RUN shipped (figures measured where it loads) into DEST
#
# Each verb first collects. Run from the repository root; STASH (default /tmp/pragmeter-gpu) holds the pieces, the
# unpacked base, the data and the runs.
set -euo pipefail
STASH=${STASH:-/tmp/pragmeter-gpu} DEVICE=${DEVICE:-cuda} SMOKE_STEPS=${SMOKE_STEPS:-200}
export PYTHONPATH=$PWD/src${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
mkdir -p "$STASH/packed" "$STASH/data" "$STASH/runs"

cli() { python3 -c 'import sys; from pragmeter.cli import main; sys.exit(main())' "$@"; }

collect() {
    if [ -d .transfer ]; then cp -r .transfer/. "$STASH/packed/"; fi
    if [ -f "$STASH/packed/data.tar.xz" ] && [ ! -f "$STASH/data/.complete" ]; then
        tar -xJf "$STASH/packed/data.tar.xz" -C "$STASH/data" && touch "$STASH/data/.complete"
    fi
    echo "stash: $(ls "$STASH/packed" | tr '\n' ' ')"
}

base() {  # the unpacked base encoder, once every shard the manifest names is here
    export PRAGMETER_CACHE=$STASH/cache
    local folder=$PRAGMETER_CACHE/encoders/all-mpnet-base-v2
    if [ ! -f "$folder/modules.json" ]; then
        python3 tools/pack_encoder.py unpack "$STASH/packed" "$folder"
    fi
}

collect
verb=${1:-collect}
shift || true
case "$verb" in
collect) ;;
smoke)
    export PRAGMETER_CACHE=$STASH/smoke-cache
    folder=$PRAGMETER_CACHE/encoders/all-mpnet-base-v2
    rm -rf "$folder" "$STASH/smoke"
    mkdir -p "$folder"
    cp -r "$STASH/packed/files/." "$folder/"
    python3 - "$folder" <<'EOF'
import sys, torch
from safetensors.torch import save_file
from transformers import AutoConfig, AutoModel
model = AutoModel.from_config(AutoConfig.from_pretrained(sys.argv[1]))
save_file({k: v.contiguous() for k, v in model.state_dict().items()}, f"{sys.argv[1]}/model.safetensors",
          metadata={"format": "pt"})
print("random weights:", sum(v.numel() for v in model.state_dict().values()), "values;",
      torch.cuda.get_device_name() if torch.cuda.is_available() else "no GPU")
EOF
    start=$(date +%s)
    python3 experiments/interpreter_multisource.py --out "$STASH/smoke" --variant smoke --encoder all-mpnet-base-v2 \
        --families nli,monotonicity,presupposition --sources general,circa --choice grice --max-steps "$SMOKE_STEPS" \
        --limit-eval 64 --device "$DEVICE" --precision bf16 --batch-size 32 --data-root "$STASH/data" --no-progress
    echo "smoke: two stages of $SMOKE_STEPS steps and their evaluations in $(( $(date +%s) - start )) s"
    cli interpret ship "$STASH/smoke/runs/smoke-pragmatic" --rank 8,16 --limit 64 --bf16-pairs 0 \
        --data-root "$STASH/data" --no-progress --output "$STASH/smoke-ship" --overwrite
    python3 experiments/interpreter_nli_eval.py --model "$STASH/smoke/runs/smoke-pragmatic" --device "$DEVICE" \
        --sets xnli_en:validation --limit 64 --data-root "$STASH/data"
    ls -la "$STASH/smoke-ship"
    ;;
train)
    base
    python3 experiments/interpreter_multisource.py --out "$STASH/runs" --encoder all-mpnet-base-v2 --device "$DEVICE" \
        --data-root "$STASH/data" "$@"
    ;;
ship)  # rank RANKS over the unpacked base, figures left to where it loads; the whole run's XNLI-en validation
    base
    run=$1 ranks=$2 dest=$3
    cli interpret ship "$STASH/runs/runs/$run" --rank "$ranks" --limit 64 --bf16-pairs 0 \
        --data-root "$STASH/data" --no-progress --output "$STASH/ship-$run" --overwrite
    python3 experiments/interpreter_nli_eval.py --model "$STASH/runs/runs/$run" --sets xnli_en:validation \
        --device "$DEVICE" --data-root "$STASH/data" --output "$STASH/runs/$run-xnli-dev.json"
    mkdir -p "$dest"
    tar -cf "$STASH/$run.tar" -C "$STASH" "ship-$run"
    split -b 15000000 -d "$STASH/$run.tar" "$dest/$run.tar."
    cp "$STASH/runs/"*.json "$dest/" 2>/dev/null || true
    cp "$STASH/runs/runs/$run/metrics.json" "$dest/$run-metrics.json"
    ;;
*) echo "unknown verb $verb: collect, smoke, train or ship" >&2; exit 2 ;;
esac
