"""Every lesson `render.py` knows: a name, its chapters, the examples and head role it defaults to.

A single-step scene (`softmax`, `query`, ...) is a lesson of one chapter; the flagship is a lesson
of all the one-head chapters. Descriptions and chapter titles are in the catalogs
(scenes/locales/<lang>/lessons.toml).
"""

from __future__ import annotations

from .chapters.context_size import ContextMemory, ContextSize, ContextSizeLesson
from .chapters.context_space import ContextSpace, SameLookup
from .chapters.cross_attention import CrossAttention, CrossLesson
from .chapters.dot_products import DotProducts
from .chapters.flash import Flash
from .chapters.formula import Formula
from .chapters.framing import Intro, Outro
from .chapters.gallery import GALLERY
from .chapters.going_deeper import GoingDeeper
from .chapters.head_split import HeadSplit
from .chapters.key import Key
from .chapters.kv_cache import KvCache, KvCacheLesson
from .chapters.last_token import EveryHeadLesson, LastToken
from .chapters.lookup import Lookup
from .chapters.low_rank import LowRank
from .chapters.masked_rows import MaskedRows
from .chapters.masking import Masking
from .chapters.mlp import Mlp, MlpLesson
from .chapters.multi_head import MultiHead
from .chapters.next_token import NextToken, NextTokenLesson
from .chapters.output_matrix import OutputMatrix
from .chapters.params import ParameterCount
from .chapters.pattern import Pattern
from .chapters.query import Query
from .chapters.ring import Ring, RingCausal, RingLesson, RingMemory
from .chapters.self_attention_steps import AllTokens, OneToken
from .chapters.softmax import Softmax
from .chapters.tokens_to_vectors import TokensToVectors
from .chapters.values import Values
from .lesson import Lesson, register_lesson
from .plans.context_space import EIFFEL_TOWER, MOLE

ATTENTION_PATTERN = register_lesson(Lesson("attention_pattern", (Pattern(),)))
QUERY = register_lesson(Lesson("query", (Query(),)))
KEY = register_lesson(Lesson("key", (Key(),)))
VALUES = register_lesson(Lesson("values", (Values(),)))
DOT_PRODUCTS = register_lesson(Lesson("dot_products", (DotProducts(),)))
SOFTMAX = register_lesson(Lesson("softmax", (Softmax(),)))
MASKING = register_lesson(Lesson("masking", (Masking(),)))

# section 1: embeddings and context
TOKENS_TO_VECTORS = register_lesson(Lesson("tokens_to_vectors", (TokensToVectors(),), examples=("harry_royal",),
                                           role=None))
MOLE_LESSON = register_lesson(Lesson("mole", (SameLookup(MOLE), ContextSpace(MOLE)), role="sense_from_context",
                                     examples=("mole_animal", "mole_chemistry", "mole_medicine"), max_sentences=4))
EIFFEL_TOWER_LESSON = register_lesson(Lesson("eiffel_tower", (ContextSpace(EIFFEL_TOWER),), role="sense_from_context",
                                             examples=("tower", "eiffel_tower", "miniature_eiffel_tower"),
                                             max_sentences=4))
LAST_TOKEN = register_lesson(EveryHeadLesson("last_token", (LastToken(),), examples=("murder_mystery",), role=None))
COMPONENTS = register_lesson(Lesson("components", GALLERY, examples=("fluffy_blue_creature",), role="adjective_noun"))
CONTEXT_SIZE = register_lesson(ContextSizeLesson("context_size", (ContextSize(), ContextMemory())))
ATTENTION_FORMULA = register_lesson(Lesson("attention_formula", (Formula(),)))
# how many numbers a head, a layer and a model hold: the model in use, and GPT-3 as the video counts it
PARAMETER_COUNT = register_lesson(Lesson("parameter_count", (ParameterCount(),), role=None))
PARAMETER_COUNT_GPT3 = register_lesson(Lesson("parameter_count_gpt3", (ParameterCount("gpt3"),), role=None))

# section 4: the next token, and deeper models (going_deeper needs a model with depth: SmolLM2 by default)
NEXT_TOKEN = register_lesson(NextTokenLesson("next_token", (NextToken(),), examples=("eiffel_tower",), role=None,
                                             model="smollm2"))
GOING_DEEPER = register_lesson(Lesson("going_deeper", (GoingDeeper(),), examples=("eiffel_tower",), role=None,
                                      model="smollm2"))

# the flagship: every one-head chapter on one canvas, each handing its pictures on to the next
FLUFFY_BLUE_CREATURE = register_lesson(Lesson(
    "fluffy_blue_creature", (Query(), Key(), DotProducts(), Softmax(), Masking(), Values(), Formula()),
    cards=True, intro=Intro("fluffy_blue_creature"), outro=Outro("fluffy_blue_creature")))

# issue 11, P2: a head's value map is low rank; the heads' value-up maps are one output matrix

LOW_RANK = register_lesson(Lesson("low_rank", (LowRank(),)))
OUTPUT_MATRIX = register_lesson(Lesson("output_matrix", (OutputMatrix(),)))

# section 3: many heads side by side, their proposals added into the embedding
MULTI_HEAD = register_lesson(Lesson("multi_head", (MultiHead(),), examples=("crashed_car", "harry_wizard", "harry_royal"),
                                    role="sense_from_context", max_sentences=3, axes=(1, 3)))

# issue 12, part B (the GPT-2 walkthrough, inside the block): heads split and merged, the key/value
# cache, the MLP (SmolLM2 by default: the toy has none), flash attention's tiled online softmax

HEAD_SPLIT_MERGE = register_lesson(Lesson("head_split_merge", (HeadSplit(),)))
KV_CACHE = register_lesson(KvCacheLesson("kv_cache", (KvCache(),), examples=("robot",), role="previous_token",
                                         model="smollm2"))
MLP = register_lesson(MlpLesson("mlp", (Mlp(),), examples=("eiffel_tower",), role=None, model="smollm2"))
FLASH_ATTENTION = register_lesson(Lesson("flash_attention", (Flash(),)))

# section 3: cross-attention, English queries reading French keys and values (model/cross_attention.py)

CROSS_ATTENTION = register_lesson(CrossLesson("cross_attention", (CrossAttention(),), examples=("pet_it", "pet_it_french"),
                                              role=None, max_sentences=2))

# issue 12, part A: the Illustrated GPT-2's self-attention, step by step; masked rows; attention as a lookup

SELF_ATTENTION_STEPS = register_lesson(Lesson("self_attention_steps", (OneToken(), AllTokens())))
# SmolLM2 by default, on the head the probes measured as its previous-token head (the title names a
# role only when the head's trace was measured to play it; the line under it says how it was chosen)
MASKED_SELF_ATTENTION = register_lesson(Lesson("masked_self_attention", (MaskedRows(),), examples=("robot",),
                                               role="previous_token", model="smollm2"))
ATTENTION_AS_LOOKUP = register_lesson(Lesson("attention_as_lookup", (Lookup(),)))

# issue 22: beyond n², ring attention (model/ring.py): a passage over a ring of devices (--devices N, 4 by
# default), the causal load of contiguous and striped blocks, memory and traffic from the model's sizes.
# SmolLM2 by default, on a real passage (model/passages.py); the toy reads its own long example.
RING_ATTENTION = register_lesson(RingLesson("ring_attention", (Ring(), RingCausal(), RingMemory()), examples=("long",),
                                            role=None, model="smollm2"))
# issue 22: beyond n² — linear attention (φ(q)·φ(k), a d × d state, an RNN when causal) and sliding windows
# with attention sinks; SmolLM2 by default (the measurements over every head need a real model's heads)

from .chapters.linear_attention import LinearCost, LinearKernel, LinearLesson, LinearPattern  # noqa: E402

LINEAR_ATTENTION = register_lesson(LinearLesson("linear_attention", (LinearKernel(), LinearPattern(), LinearCost()),
                                                examples=("fluffy_blue_creature",), role="previous_token",
                                                model="smollm2"))

from .chapters.sliding_window import WindowLesson, WindowMask, WindowReach, WindowSinks  # noqa: E402

SLIDING_WINDOW = register_lesson(WindowLesson("sliding_window", (WindowMask(), WindowReach(), WindowSinks()),
                                              examples=("long",), role=None, model="smollm2"))
