"""Every lesson `render.py` knows: a name, its chapters, the examples and head role it defaults to.

A single-step scene (`softmax`, `query`, ...) is a lesson of one chapter; the flagship is a lesson
of all the one-head chapters. Descriptions and chapter titles are in the catalogs
(scenes/locales/<lang>/lessons.toml).
"""

from __future__ import annotations

from .chapters.pattern import Pattern
from .lesson import Lesson, register_lesson

ATTENTION_PATTERN = register_lesson(Lesson("attention_pattern", (Pattern(),)))
