"""The interpreter's multi-source recipe (``classify/recipes/interpreter.py``): a general stage (general NLI,
monotonicity, presupposition) and a pragmatic stage (INLI with FLUTE and Circa) started from its weights, each a
resumable ``classifier train`` run; selection on INLI validation, with the Circa development split's yes/no choice
accuracy beside it. Families and sources are chosen per variant, so one command per ablation row:

    # every family, then INLI + FLUTE + Circa (2 cores: run under nice, in the background)
    OMP_NUM_THREADS=2 nice -n 10 python experiments/interpreter_multisource.py --out runs/ms --variant all \\
        --families nli,monotonicity,presupposition --sources flute,circa --epochs-general 1 --epochs-pragmatic 2
    # the ablation rows: no general stage; general stage, INLI alone
    python experiments/interpreter_multisource.py --out runs/ms --variant implicature --families none --sources flute,circa
    python experiments/interpreter_multisource.py --out runs/ms --variant general --sources none
    # GRICE's turns (and Circa's exchanges) also as choice items, with the loss over their readings' scores
    python experiments/interpreter_multisource.py --out runs/ms --variant choice --init-from interpreter-minilm-inli \
        --sources general,circa --choice grice --grice-cap 3000
    # a MiniLM student of a larger interpreter: the same recipe, the teacher's probabilities as soft targets
    python experiments/interpreter_multisource.py --out runs/ms --variant student --init-from interpreter-minilm-inli \
        --sources general,circa --choice grice --grice-cap 3000 --teacher runs/ms/runs/mpnet-pragmatic --soft-weight 0.5
    # the choice items' readings anchored to the teacher's probabilities as well (weight 1 beside their loss)
    python experiments/interpreter_multisource.py --out runs/ms --variant anchored --init-from interpreter-minilm-inli \
        --sources general --choice grice,circa --teacher interpreter-minilm-inli --choice-anchor 1
    # the general sets' entailment as implied-or-explicit (one class for the loss) rather than as explicit
    python experiments/interpreter_multisource.py --out runs/ms --variant entailed --init-from interpreter-minilm-inli \
        --sources general --nli-entailment entailed
    # the general NLI pairs on their own labels, the teacher's share only on the others
    python experiments/interpreter_multisource.py --out runs/ms --variant labels --init-from interpreter-minilm-inli \
        --sources general --families nli --teacher interpreter-minilm-inli --soft-weight 0.8 \
        --label-only-groups taxinli,esnli,cad_nli,sick,conjnli
    # one general set at its own cap (more MNLI pairs than the other sets' 1,500)
    python experiments/interpreter_multisource.py --out runs/ms --variant mnli --init-from interpreter-minilm-inli \
        --sources general --families nli --cap 1500 --set-caps taxinli=6000
    # smoke run
    python experiments/interpreter_multisource.py --out /tmp/ms --variant smoke --max-steps 2 --limit-eval 16

Each variant writes ``OUT/runs/<variant>-general`` and ``OUT/runs/<variant>-pragmatic`` (whole-weight classifier
folders), checkpoints under ``OUT/work`` (an interrupted stage resumes after its last finished epoch; a finished one is
skipped) and its validation figures to ``OUT/<variant>.json`` (INLI, the Circa yes/no and GRICE development
splits, FLUTE's figurative and the sarcastic development sentences, and Fig-QA's validation metaphors). No stage reads a test split (``run_recipe(...,
evaluate_test=False)``): the shipped form reads INLI test once, through ``pragmeter interpret ship --evaluate-test``.
"""
from __future__ import annotations

import argparse
import json
import logging
import random
import sys
from pathlib import Path

from pragmeter.classify.distillation import soft_weight, with_teacher
from pragmeter.classify.job import run_recipe
from pragmeter.classify.recipes.interpreter import (CHOICE, GENERAL, MEANT_FIRST_DEV, NLI_ENTAILMENT, PRAGMATIC,
                                                    build, circa_items, general_sets, grice_evaluator,
                                                    grice_items, training_files, unread_sets,
                                                    yes_no_evaluator)
from pragmeter.data.root import dataset_checksums, sha256_of
from pragmeter.classify.training import FineTuneConfig, missing_groups
from pragmeter.cli.classifier import add_distillation_options
from pragmeter.io import write_json_atomic


def names(value: str, allowed) -> tuple[str, ...]:
    chosen = () if value.strip() in ("", "none") else tuple(v.strip() for v in value.split(","))
    unknown = sorted(set(chosen) - set(allowed))
    if unknown:
        raise SystemExit(f"unknown name {unknown[0]!r}; choose none or among {', '.join(allowed)}")
    return chosen


def set_caps(value: str) -> dict[str, int]:
    """``NAME=N,NAME=N`` (e.g. ``taxinli=6000``) as {name: pairs}."""
    caps = {}
    for part in (p.strip() for p in value.split(",") if p.strip()):
        name, sep, number = part.partition("=")
        if not sep or not name.strip() or not number.strip().isdigit():
            raise argparse.ArgumentTypeError(f"{part!r} is not NAME=PAIRS (e.g. taxinli=6000)")
        caps[name.strip()] = int(number)
    return caps


def sample(data, args):
    if args.max_steps:
        wanted = args.max_steps * args.batch_size
        rows = sorted(random.Random("max-steps").sample(range(len(data.train)), min(wanted, len(data.train))))
        data.train = data.train.subset(rows)
        if data.choice is not None:
            data.choice = data.choice.head(args.max_steps * max(1, args.batch_size // 4))
    if args.limit_eval:
        data.val, data.test = data.val.head(args.limit_eval), data.test.head(args.limit_eval)
    return data


def stage(name: str, data, epochs: int, init_from: Path | None, args) -> dict:
    out = Path(args.out)
    folder, work = out / "runs" / f"{args.variant}-{name}", out / "work" / f"{args.variant}-{name}"
    if init_from is not None:  # the starting weights are part of what a resumed run must share
        data.arguments["init_from"] = {"folder": init_from.name, "sha256": sha256_of(init_from / "model.safetensors")}
    if not (folder / "metrics.json").is_file():
        teacher = args.teacher if name == "pragmatic" else None  # it labels the final stage's pairs
        missing = missing_groups(data.train, args.label_only_groups) if teacher else []
        if missing:
            raise SystemExit(f"--label-only-groups: {missing[0]!r} is no group of the {name} stage's training pairs "
                             f"(they are {', '.join(sorted(set(data.train.groups or ())))})")
        if teacher:
            with_teacher(data, teacher, work, progress=not args.no_progress, choice=bool(args.choice_anchor))
        print(f"{args.variant}-{name}: {len(data.train)} training pairs", file=sys.stderr)
        config = FineTuneConfig(epochs=1 if args.max_steps else epochs, batch_size=args.batch_size, lr=args.lr,
                                max_length=args.max_length, precision=args.precision, select_on="accuracy",
                                seed=args.seed, checkpoint_every=args.checkpoint_every,
                                soft_weight=soft_weight(teacher, args.soft_weight) if teacher else 0.0,
                                choice_anchor=args.choice_anchor,
                                choice_explicit_weight=args.choice_explicit_weight if name == "pragmatic" else 1.0,
                                label_only_groups=args.label_only_groups if teacher else ())
        run_recipe(data, args.encoder, config, folder, work, args.device,
                   " ".join(["python", "experiments/interpreter_multisource.py", *sys.argv[1:]]),
                   not args.no_progress, init_from=init_from, evaluate_test=False)
    metrics = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))
    best = metrics["history"][metrics["best_epoch"] - 1]
    return {"run": folder.name, "train_pairs": len(data.train), "best_epoch": metrics["best_epoch"],
            "val_accuracy": best["val_accuracy"], "val_macro_f1": best["val_macro_f1"],
            "history": metrics["history"]}


def whole_weights(name: str, out: Path) -> Path:
    """A classifier folder with whole weights for interpreter ``name`` (a shipped form is written out once)."""
    from pragmeter.classify.loading import load_classifier
    from pragmeter.interpreter.hub import resolve_interpreter

    folder = resolve_interpreter(name)
    if (folder / "model.safetensors").is_file():
        return folder
    whole = out / f"init-{folder.name}"
    if not (whole / "model.safetensors").is_file():
        classifier = load_classifier(folder, device="cpu", precision="fp32")
        classifier.save(whole, card=f"# {folder.name}, whole weights\n\nWritten out from the shipped form in "
                                    f"{folder} to start training from.\n")
    return whole


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--variant", required=True, help="name of this variant's runs")
    parser.add_argument("--encoder", default="all-MiniLM-L6-v2")
    parser.add_argument("--families", default=",".join(GENERAL), help="general stage's families, or none")
    parser.add_argument("--sources", default=",".join(PRAGMATIC), help="pragmatic stage's sources besides INLI")
    parser.add_argument("--cap", type=int, default=6000, help="pairs per general set and split (seeded sample)")
    parser.add_argument("--mix-cap", type=int, default=None,
                        help="pairs per general set and split mixed into the pragmatic stage (default: --cap)")
    parser.add_argument("--set-caps", type=set_caps, default={}, metavar="NAME=PAIRS,...",
                        help="a general set's own cap per split, in place of --cap and --mix-cap (e.g. taxinli=6000)")
    parser.add_argument("--circa-cap", type=int, default=4000, help="Circa items in training (3 pairs each)")
    parser.add_argument("--inli-cap", type=int, default=None, help="INLI training pairs in the pragmatic stage "
                                                                   "(seeded sample; default all)")
    parser.add_argument("--choice", default="none", help="sets trained as choice items with the loss over their "
                                                          f"readings' scores in the pragmatic stage: none or among "
                                                          f"{', '.join(CHOICE)}")
    parser.add_argument("--grice-cap", type=int, default=4000, help="GRICE training turns (4 readings each)")
    parser.add_argument("--flute-cap", type=int, default=4000,
                        help="FLUTE figurative sentences trained as choice items (3 readings each)")
    parser.add_argument("--sarcasm-cap", type=int, default=4000,
                        help="sarcastic tweets trained as choice items (2 readings each)")
    parser.add_argument("--figqa-cap", type=int, default=4000,
                        help="Fig-QA metaphors trained as choice items (3 readings each)")
    parser.add_argument("--impli-cap", type=int, default=4000,
                        help="IMPLI idiomatic and metaphoric sentences trained as choice items (3 readings each)")
    parser.add_argument("--situated-cap", type=int, default=4000,
                        help="situated implicatures written for pragmeter trained as choice items (4 readings each)")
    parser.add_argument("--situated-prompts", type=lambda text: tuple(t.strip() for t in text.split(",") if t.strip()),
                        default=None, help="the writing runs whose situated items train, as their prompt templates "
                                           "(comma-separated, e.g. written_situated.prompt.md; default all)")
    parser.add_argument("--framed", type=float, default=0.0,
                        help="share of the figurative and sarcastic choice items said in a frame (a speaker, the "
                             "quoted sentence, sometimes a question about what was meant)")
    parser.add_argument("--reworded", type=float, default=0.0,
                        help="share of the figurative and sarcastic choice items whose restated reading is a near "
                             "copy of the sentence (a changed tense, an added adverb, another person) rather than "
                             "its exact words")
    parser.add_argument("--nli-entailment", default="explicit", choices=NLI_ENTAILMENT,
                        help="the general NLI sets' entailment labelled explicit (what the premise says, in other "
                             "words) or entailed (implied or explicit, either one: the loss reads the two as one "
                             "class)")
    parser.add_argument("--init-from", default=None,
                        help="start the pragmatic stage from this interpreter (folder or packaged name; a shipped "
                             "form is first written out whole to OUT/init-<name>) instead of the general stage")
    add_distillation_options(parser, "the pragmatic stage's pairs")
    parser.add_argument("--choice-explicit-weight", type=float, default=1.0,
                        help="with --choice: the explicit weight w of the reading score the choice loss trains, "
                             "log(P(implied) + w P(explicit)), recorded as the trained folder's explicit weight "
                             "(default 1: the plain sum)")
    parser.add_argument("--choice-anchor", type=float, default=0.0,
                        help="with --teacher and --choice: the weight of a cross-entropy pulling each choice item's "
                             "readings towards the teacher's probabilities on them, beside the loss over their scores "
                             "(default 0: no anchor)")
    parser.add_argument("--epochs-general", type=int, default=1)
    parser.add_argument("--epochs-pragmatic", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-5)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--precision", default="bf16", choices=["auto", "fp32", "bf16"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-steps", type=int, default=None, help="one epoch of this many steps per stage (smoke)")
    parser.add_argument("--checkpoint-every", type=int, default=0,
                        help="also checkpoint every N optimizer steps within an epoch (long epochs on the CPU)")
    parser.add_argument("--limit-eval", type=int, default=None)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--data-root", default=None)
    args = parser.parse_args(argv)

    if args.soft_weight is not None and not args.teacher:
        parser.error("--soft-weight weighs a teacher's probabilities: give --teacher too")
    if args.label_only_groups and not args.teacher:
        parser.error("--label-only-groups keeps pairs off a teacher's probabilities: give --teacher too")
    if args.choice_anchor and not (args.teacher and names(args.choice, CHOICE)):
        parser.error("--choice-anchor pulls choice items' readings towards a teacher's probabilities: give --teacher "
                     "and --choice too")
    if args.choice_explicit_weight != 1 and not names(args.choice, CHOICE):
        parser.error("--choice-explicit-weight weighs the choice items' reading scores: give --choice too")
    if not 0 <= args.choice_explicit_weight <= 1:
        parser.error(f"--choice-explicit-weight must be between 0 and 1, not {args.choice_explicit_weight:g}")
    families, sources = names(args.families, GENERAL), names(args.sources, PRAGMATIC)
    unread = unread_sets(args.set_caps, families)
    if unread:
        parser.error(f"--set-caps: {unread[0]!r} is no set of the families {args.families} "
                     f"(they read {', '.join(general_sets(families)) or 'nothing'})")
    if args.set_caps and args.init_from and "general" not in sources:
        parser.error("--set-caps sizes the general sets: with --init-from, add general to --sources")
    choice = names(args.choice, CHOICE)
    summary = {"variant": args.variant, "families": list(families), "sources": list(sources), "choice": list(choice),
               "encoder": args.encoder, "selected_on": "INLI validation accuracy"}
    if args.teacher:
        summary["teacher"] = str(args.teacher)
    init = None
    if args.init_from:
        init = whole_weights(args.init_from, Path(args.out))
        summary["init_from"] = str(args.init_from)
    elif families:
        data = sample(build("general", families=families, cap=args.cap, seed=args.seed, root=args.data_root,
                            nli_entailment=args.nli_entailment, set_caps=args.set_caps), args)
        summary["general"] = stage("general", data, args.epochs_general, None, args)
        init = Path(args.out) / "runs" / f"{args.variant}-general"
    mix_cap = args.cap if args.mix_cap is None else args.mix_cap
    data = sample(build("pragmatic", families=families, sources=sources, cap=mix_cap, circa_cap=args.circa_cap,
                        seed=args.seed, root=args.data_root, inli_cap=args.inli_cap, choice=choice,
                        grice_cap=args.grice_cap, flute_cap=args.flute_cap, sarcasm_cap=args.sarcasm_cap,
                        figqa_cap=args.figqa_cap, impli_cap=args.impli_cap, situated_cap=args.situated_cap,
                        situated_prompts=args.situated_prompts,
                        framed=args.framed, reworded=args.reworded, nli_entailment=args.nli_entailment,
                        set_caps=args.set_caps if "general" in sources else None), args)
    if families and not args.init_from:  # the final weights derive from the general stage's data: its files too
        data.data_files = {**data.data_files, **dataset_checksums(training_files("general", families))}
    summary["pragmatic"] = stage("pragmatic", data, args.epochs_pragmatic, init, args)
    from pragmeter.interpreter.model import Interpreter

    dev = circa_items(args.data_root)[1]
    if args.limit_eval:
        dev = dev[:args.limit_eval]
    interpreter = Interpreter.load(Path(args.out) / "runs" / f"{args.variant}-pragmatic", device=args.device,
                                   precision="fp32")
    summary["circa_dev_yes_no_accuracy"] = yes_no_evaluator(dev)(interpreter)["circa_dev_accuracy"]
    summary["circa_dev_items"] = len(dev)
    turns = grice_items(args.data_root)[1][:args.limit_eval or None]
    summary["grice_dev_accuracy"] = grice_evaluator(turns)(interpreter)["grice_dev_accuracy"]
    summary["grice_dev_turns"] = len(turns)
    for name, split in MEANT_FIRST_DEV.items():
        items = split.reader(args.data_root)[1][:args.limit_eval or None]
        summary[f"{name}_accuracy"] = split.evaluator(items, name)(interpreter)[f"{name}_accuracy"]
        summary[f"{name}_items"] = len(items)
    write_json_atomic(Path(args.out) / f"{args.variant}.json", summary)
    print(json.dumps({k: summary[k] for k in ("variant", "circa_dev_yes_no_accuracy", "grice_dev_accuracy",
                                              *(f"{name}_accuracy" for name in MEANT_FIRST_DEV))}
                     | {"val_accuracy": summary["pragmatic"]["val_accuracy"]}))


if __name__ == "__main__":
    logging.basicConfig(format="%(message)s")
    logging.getLogger("pragmeter").setLevel(logging.INFO)
    main()
