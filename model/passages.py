"""English passages written for the "beyond n²" measurements (ring, linear attention, sliding windows).

Each `PASSAGES` entry is 40–60 SmolLM2 tokens. `LONG_PASSAGE` (166 SmolLM2 tokens) tells one
paragraph three times and stops partway through a fourth telling: the next word is on record three
times, far back, and a model that can only look a few tokens back loses the copy. The toy knows only
its own small vocabulary: its passages are its own examples (`passages_for`)."""

from __future__ import annotations

PASSAGES = (
    "The old lighthouse keeper climbed the stairs every evening to light the lamp. Ships passing in "
    "the night relied on its beam to avoid the rocks. One winter, a storm knocked out the power, and "
    "he lit the lamp by hand.",
    "Maria planted tomatoes, beans and basil in the small garden behind her house. Every morning she "
    "watered the rows before going to work, and by the end of the summer her neighbours were asking "
    "her for advice.",
    "When the train stopped in the middle of the valley, nobody knew why. The conductor walked slowly "
    "along the carriages, explaining that a tree had fallen across the tracks and that they would "
    "have to wait until it was cleared.",
)

_PARAGRAPH = ("The baker opened her shop before sunrise, lit the big oven and set out the loaves of rye, the "
              "sweet rolls and the small almond cakes that the children liked best. By seven o'clock the "
              "line reached the corner of the street.")

LONG_PASSAGE = f"{_PARAGRAPH} {_PARAGRAPH} {_PARAGRAPH} The baker opened her shop before sunrise, lit the big oven and set out the loaves of"

TOY_EXAMPLES = ("long", "murder_mystery", "fluffy_blue_creature")


def passages_for(info) -> tuple[str, ...]:
    """The passages to measure `info`'s model on: the toy's own examples, or PASSAGES."""
    if info.family == "toy":
        return tuple(info.examples[e] for e in TOY_EXAMPLES if e in info.examples)
    return PASSAGES
