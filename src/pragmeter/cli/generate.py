"""``pragmeter generate``: build new data the way the papers did, with any OpenAI-compatible chat model.

pairs (ImpScore explicit sides), graded (ImpScore graded groups: hedged, indirect and hint rewrites), inli (premises
and four hypotheses), drinq (contexts and 5-option items), agreement (Emphasized-Talk annotation filter),
inli-hypothesis-baseline (the INLI appendix D artefact check).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pragmeter.cli.common import INCOMPLETE, add, add_input_option, load_chat_backend, response_cache


def _pipeline(kinds, name: str, function: str, options, input_help: str, **parser_text) -> argparse.ArgumentParser:
    """A pipeline's parser: ``--input`` and the options every LLM pipeline shares. ``function`` names its library
    coroutine (``MODULE:NAME`` in pragmeter.generate), called with the session, ``input_path``, ``output``,
    ``overwrite`` and the keywords ``options(args)`` gives (checked before any work)."""
    parser = kinds.add_parser(name, **parser_text)
    parser.add_argument("--input", required=True, help=input_help)
    add(parser, "llm", "model_args", output={"required": True, "help": "file to write (csv, tsv, jsonl or parquet; "
                                                                        "agreement: json)"})
    add(parser, response_cache={"help": "LLM response cache file (default OUTPUT.responses.jsonl; rerun to resume)"})
    add(parser, "no_response_cache")
    parser.add_argument("--retries", type=int, default=2,
                        help="new samples asked for an empty, refused or malformed answer before dropping it "
                             "(default 2)")
    add(parser, "no_progress", seed={"help": "seed of names, splits, negatives and option order"},
        overwrite={"help": "replace an existing output file"})
    parser.set_defaults(func=lambda args: _run(args, function, options(args)))
    return parser


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "generate", help="build new data with an LLM (pairs, graded, inli, drinq, agreement)",
        description="LLM pipelines of the ImpScore, INLI, DRInQ and Emphasized-Talk papers. Every answer is cached "
                    "as it arrives (rerun an interrupted command to resume); empty, refused and malformed answers "
                    "are asked again, then dropped and counted; counts in/out are printed per stage and written "
                    "to OUTPUT.report.json with the model and prompt hashes.")
    kinds = parser.add_subparsers(dest="pipeline", metavar="PIPELINE", required=True)

    pairs = _pipeline(kinds, "pairs", "pairs:generate_pairs", lambda a: dict(
        column=a.column, source_type=a.source_type, source_name=a.source_name, paper_source=a.prompt_source,
        seed=a.seed), "table of implicit sentences (txt/csv/tsv/jsonl/parquet)",
                      help="ImpScore (implicit, explicit) pairs with negatives, in the corpus format",
                      description="Write the explicit side of each implicit sentence with the ImpScore paper's "
                                  "per-source prompt (Appendix A.1).")
    add(pairs, column={"help": "column with the implicit sentences (default text)"})
    pairs.add_argument("--source-type", required=True, choices=["hate", "dialogue", "sarcasm", "sentiment", "irony"],
                       help="kind of source: picks the paper's prompt (hate: ToxiGEN, dialogue: Implicatures, "
                            "sarcasm: Snarks, sentiment: ABSA, irony: SemEval)")
    pairs.add_argument("--prompt-source", default=None,
                       help="use the prompt of this paper source instead (toxigen, dghsd, adversarial, implicatures, "
                            "ludwig, absa, semeval, snarks)")
    pairs.add_argument("--source-name", default=None, help="value of the source column (default generated_TYPE)")

    graded = _pipeline(kinds, "graded", "graded:generate_graded",
                       lambda a: dict(column=a.column, id_column=a.id_column),
                       "table of direct sentences (txt/csv/tsv/jsonl/parquet)",
                       help="ImpScore graded groups: hedged, indirect and hint rewrites of direct sentences",
                       description="Rewrite each direct sentence (level 1) at three less explicit levels: hedged (2), "
                                   "indirect (3), off-record hint (4), one request per level; copies, long rewrites "
                                   "and hints that restate the input are dropped.")
    add(graded, column={"help": "column with the direct sentences (default text)"})
    graded.add_argument("--id-column", default=None,
                        help="input column copied to the output as upstream_id (e.g. the corpus's origin)")

    inli = _pipeline(kinds, "inli", "inli:generate_inli", lambda a: dict(frame_type=a.frame_type, seed=a.seed),
                     "implicature frames (circa: context, question-X, answer-Y, goldstandard1; ludwig: Context "
                     "utterance, Response utterance, Implicature; normbank: setting, behavior, details; socialchem: "
                     "situation, rot)",
                     help="INLI premises and implied/explicit/neutral/contradiction hypotheses",
                     description="Stage 1 implicature augmentation, stage 2 alternative hypotheses, then "
                                 "paraphrasing, with the upstream INLI prompts; writes the INLI CSV schema.")
    inli.add_argument("--frame-type", required=True, choices=["circa", "ludwig", "normbank", "socialchem"])

    drinq = _pipeline(kinds, "drinq", "drinq:generate_drinq",
                      lambda a: dict(column=a.column, options=_drinq_options(a)), "table of questions",
                      help="DRInQ contexts and 5-option items for questions",
                      description="Default intent and comment per question, intent ranking by embedding distance, "
                                  "context generation with abstention, similarity filter, 5-option MCQ assembly in "
                                  "the DRInQ CSV schema.")
    add(drinq, column={"default": "question", "help": "column with the questions (default question)"},
        encoder={"help": "sentence encoder for ranking and filtering"})
    drinq.add_argument("--candidate-intents", type=int, default=None,
                       help="ask for contexts for at most this many ranked intents per question (default all)")
    drinq.add_argument("--keep-intents", type=int, default=10,
                       help="keep the N highest-ranked intents with valid contexts (paper: 10)")
    drinq.add_argument("--max-similarity", type=float, default=0.8,
                       help="drop a generated comment whose cosine similarity to the default comment is at least "
                            "this (default 0.8)")

    _pipeline(kinds, "agreement", "agreement:filter_agreement", lambda a: {},
              "annotations in the Emphasized-Talk data.json schema",
              help="Emphasized-Talk: keep annotations an LLM judges semantically close",
              description="For each emphasized word with several implication annotations, ask the paper's "
                          "Appendix B question and keep the word only on 'yes'.")

    baseline = kinds.add_parser(
        "inli-hypothesis-baseline", help="INLI hypothesis-only classifier (paper appendix D artefact check)",
        description="TF-IDF + logistic regression on hypotheses alone. Without --input: trained on the INLI train "
                    "split, tested on the test split. With --input FILE (INLI CSV schema): tested on FILE after "
                    "training on --train, or 5-fold cross-validated within FILE (folds by premise) when --train is "
                    "not given.")
    add_input_option(baseline, "INLI-schema CSV to test (e.g. generated; default: the INLI test split)", required=False)
    baseline.add_argument("--train", default=None, help="INLI-schema CSV to train on")
    add(baseline, "seed", "data_root")
    baseline.set_defaults(func=run_baseline)


def _run(args: argparse.Namespace, pipeline: str, options: dict) -> int:
    from pragmeter.generate.output import default_cache, generate_file

    output = Path(args.output)
    failed = generate_file(pipeline, Path(args.input), output, lambda: load_chat_backend(args.model, args.model_args),
                           response_cache(args, default_cache(output)), args.retries, not args.no_progress,
                           args.overwrite, on_line=lambda line: print(line, flush=True), **options)
    if failed:
        print(f"warning: {failed} request(s) failed after retries and were left out; the output is marked "
              "incomplete: rerun the same command to retry them (answers already received are reused; no "
              "--overwrite needed)", file=sys.stderr)
    return INCOMPLETE if failed else 0


def _drinq_options(args: argparse.Namespace):
    from pragmeter.generate.drinq import DrinqOptions

    return DrinqOptions(candidate_intents=args.candidate_intents, keep_intents=args.keep_intents,
                        max_similarity=args.max_similarity, encoder=args.encoder, seed=args.seed)


def run_baseline(args: argparse.Namespace) -> int:
    from pragmeter.generate.hypothesis_baseline import format_result, run_hypothesis_baseline

    print(format_result(run_hypothesis_baseline(args.input, args.train, root=args.data_root, seed=args.seed)))
    return 0
