"""The Floyd et al. dev battery (Metaphor and Maxims, ``datasets/floyd.py``) as multiple choice with its scenario,
with Hu et al.'s protocol (ACL 2023): the phenomenon's task instruction (read from the battery's raw files), the
scenario, numbered options in a random order, "Answer:"; the reply is an option number. Hu et al. average five
random option orders: each item appears once per order (``orders``, default 5, shuffled with ``seed``), so
``--limit 40`` is the first order of every item. Accuracy over all (item, order) trials, per phenomenon and per order.
"""

from __future__ import annotations

import random
from functools import cached_property

from pragmeter.data.root import dataset_checksums
from pragmeter.datasets.floyd import BATTERY, instructions_file, load_floyd_battery, load_floyd_instructions
from pragmeter.errors import PragmeterError
from pragmeter.eval.multiple_choice import ChoiceItem, ChoiceTask
from pragmeter.eval.task import load_template

PHENOMENA = ("Metaphor", "Maxims")


class Floyd(ChoiceTask):
    name = "floyd"
    version = "1"
    description = "Floyd et al. battery (Metaphor, Maxims): the meant reading with its scenario, 5 option orders"
    citation = ("Hu, Floyd, Jouravlev, Fedorenko & Gibson 2023, A fine-grained comparison of pragmatic language "
                "understanding in humans and language models (ACL 2023)")
    published = (
        "humans: Metaphor 89.7%, Maxims 79.6% (374 participants; computed from Hu et al.'s released responses, "
        "jennhu/lm-pragmatics human_data/fj/Human_{Metaphor,Maxims}.csv)",
        "text-davinci-002: Metaphor 78.0%, Maxims 65.3%; Flan-T5-XXL: 74.0%, 38.9% (mean over 5 option orders; "
        "computed from Hu et al.'s released outputs, model_data/*_seed{0-4}_examples0.csv, Maxims on 19 items)",
        "random 20% (Metaphor, 5 options), 25% (Maxims, 4)",
    )
    max_tokens = 8
    arguments = {"orders": "5", "seed": "0", "mode": "generate"}
    group_fields = ("phenomenon", "order")

    def check_arguments(self, given: set[str]) -> None:
        super().check_arguments(given)
        if int(self.args["orders"]) < 1:
            raise PragmeterError(f"task {self.name}: argument orders={self.args['orders']!r} must be at least 1")

    def build(self) -> list[ChoiceItem]:
        battery = load_floyd_battery(self.data_root)
        items = []
        for order in range(int(self.args["orders"])):
            for item in battery:
                positions = list(range(len(item.options)))
                random.Random(f"floyd-{self.args['seed']}-{order}-{item.id}").shuffle(positions)
                keys = [str(n) for n in range(1, len(positions) + 1)]
                options = tuple((key, item.options[p]) for key, p in zip(keys, positions))
                items.append(ChoiceItem(f"{item.id}/order-{order}", item.scenario, item.utterance, options,
                                        keys[positions.index(item.answer)], item.utterance,
                                        {"phenomenon": item.task, "order": order, "battery_id": item.id}))
        return items

    def checksums(self) -> dict[str, str]:
        return dataset_checksums([BATTERY, *(instructions_file(p) for p in PHENOMENA)])

    def templates(self) -> dict[str, str]:
        return {"floyd_item": load_template("floyd_item.txt")}

    @cached_property
    def instructions(self) -> dict[str, str]:
        return load_floyd_instructions(PHENOMENA, self.data_root)

    def prompt(self, item: ChoiceItem, run: int) -> str:
        return (self.templates()["floyd_item"].replace("{INSTRUCTIONS}", self.instructions[item.extra["phenomenon"]])
                .replace("{SCENARIO}", item.context)
                .replace("{OPTIONS}", "\n".join(f"{key}) {reading}" for key, reading in item.options)))


TASKS = [Floyd]
