"""A seeded random stand-in for the toy world, used only until trained weights exist."""

from .config import ModelConfig
from .loading import ASSETS, save_model
from .transformer import random_model

WORDS = """a the fluffy blue creature roamed verdant forest tiny red fox saw huge green tower""".split()

if __name__ == "__main__":
    cfg = ModelConfig(name="toy", vocab=WORDS + ["."], d_model=64, n_heads=4, d_head=16, n_ctx=64,
                      head_names=[["adjectives → nouns", "sense from context", "previous token", "L0H3"]],
                      directions=["noun", "adjective"], notes="seeded random placeholder")
    save_model(random_model(cfg, seed=0, scale=2.0), ASSETS / "toy")
