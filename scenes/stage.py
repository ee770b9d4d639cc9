"""The stage: the frame's named regions and the pictures chapters hand on to each other.

A chapter asks the stage where things go (`stage.region("grid")`) instead of typing coordinates,
and finds what the chapter before it left (`stage.grid`, `stage.queries`, ...) so a lesson morphs
from step to step instead of rebuilding. Regions are in scene units of the default frame
(14.22 × 8 at 16:9): the camera may move during a chapter, but it is back home between chapters.
"""

from __future__ import annotations

import sys

from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
from manim import FadeOut, config

from .i18n import Say, plain_text
from .style import Theme

BREATH_S = 0.35  # silence after a block's speech before the next block may start
HAND_ONS = ("words", "queries", "keys", "grid", "grid_titles", "values")


@dataclass(frozen=True)
class Region:
    """An axis-aligned box of the frame: left, right, bottom, top (scene units)."""

    name: str
    left: float
    right: float
    bottom: float
    top: float

    @property
    def width(self) -> float:
        return self.right - self.left

    @property
    def height(self) -> float:
        return self.top - self.bottom

    @property
    def center(self) -> np.ndarray:
        return np.array([(self.left + self.right) / 2, (self.bottom + self.top) / 2, 0.0])

    @property
    def size(self) -> tuple[float, float]:
        return self.width, self.height

    def contains(self, mob, tol: float = 1e-6) -> bool:
        (x0, y0, _), (x1, y1, _) = mob.get_corner([-1, -1, 0]), mob.get_corner([1, 1, 0])
        return (x0 >= self.left - tol and x1 <= self.right + tol and y0 >= self.bottom - tol
                and y1 <= self.top + tol)

    def fit(self, mob, *, align: str = "center", grow: bool = False):
        """Scale `mob` down (or up, with grow) to fit, and place it: center, top, left or top_left."""
        k = min(self.width / max(mob.width, 1e-9), self.height / max(mob.height, 1e-9))
        if k < 1 or grow:
            mob.scale(k)
        c = self.center.copy()
        if "top" in align:
            c[1] = self.top - mob.height / 2
        if "left" in align:
            c[0] = self.left + mob.width / 2
        mob.move_to(c)
        return mob


def standard_regions(width: float | None = None, height: float | None = None) -> dict[str, Region]:
    """The frame cut into the regions every lesson shares:

    title (top strip) · sentence (word row under it) · left (a column for matrices and vectors) ·
    grid (the attention grid, left two thirds) · panel (notes, the softmax column, counts, right
    third) · caption (a band at the bottom for an on-screen note) · full (the whole frame, margins kept).
    """
    w = (width or config.frame_width) / 2
    h = (height or config.frame_height) / 2
    m = 0.25  # margin kept clear at the frame's edges
    panel_left = w * 0.394  # 2.8 at 16:9
    return {
        "full": Region("full", -w + m, w - m, -h + m, h - m),
        "title": Region("title", -w + m, w - m, h - 0.85, h - 0.1),
        "sentence": Region("sentence", -w + m, w - m, h - 1.75, h - 0.85),
        "left": Region("left", -w + m, -w * 0.55, -h + m, h - 1.75),
        "grid": Region("grid", -w + 0.25 + 0.1, panel_left - 0.45, -h + 0.5, h - 0.5),
        "panel": Region("panel", panel_left, w - 0.26, -h + 0.3, h - 0.55),
        "caption": Region("caption", -w + m, w - m, -h + 0.1, -h + 0.85),
    }


class Stage:
    """Owns the regions and the hand-on pictures of one lesson being played on one scene."""

    def __init__(self, scene, say: Say, theme: Theme):
        self.scene = scene
        self.say = say
        self.theme = theme
        self.regions = standard_regions()
        # the pictures chapters hand on (None: not on stage)
        self.words = None  # WordBoxes: the sentence row
        self.queries = None  # the query vectors, one column per shown token (VGroup; .tokens = indices)
        self.keys = None  # the key vectors, one per shown token (VGroup; .tokens = indices)
        self.grid = None  # the AttentionGrid
        self.grid_titles = None  # its axis titles ("queries", "keys")
        self.values = None  # value vectors
        self.captions: list[tuple[str, float]] = []
        self.drawn: dict[str, dict] = {}  # chapter key -> the mobjects it drew that tests look at
        self.blocks: list[dict] = []  # every caption block: id, start, end, text, seconds of speech
        self.chapter_number, self.chapter_key, self.block_number = 0, "", 0
        self._in_block = False
        self.space_key = None  # the corner key to ␣ (space_key_for)
        self._attached: list[tuple[object, tuple]] = []  # (picture, what explains it): see `attach`
        self._on_leave: list = []  # what a chapter undoes only if another follows (see `on_leave`)

    # --- layout ---------------------------------------------------------------------------
    def region(self, name: str) -> Region:
        return self.regions[name]

    @property
    def camera_frame(self):
        return self.scene.camera.frame

    def on_leave(self, undo) -> None:
        """Run `undo()` (it plays: the camera home, a turned space back) when the next chapter starts, not
        at this one's end: the chapter's last frame stays the one its last caption spoke over, and a lesson
        that ends here ends on it."""
        self._on_leave.append(undo)

    @property
    def undo_pending(self) -> int:
        """How many undos wait for a next chapter (`on_leave`)."""
        return len(self._on_leave)

    def leave(self) -> None:
        """Play what the chapter before left to undo (`on_leave`), in order."""
        pending, self._on_leave = self._on_leave, []
        for undo in pending:
            undo()

    # --- hand-ons -------------------------------------------------------------------------
    def has(self, name: str) -> bool:
        """Whether the chapter before left `name` on screen."""
        mob = getattr(self, name)
        return mob is not None and mob in self.scene.mobjects

    def hand_on(self, **pictures) -> None:
        for name, mob in pictures.items():
            if name not in HAND_ONS:
                raise KeyError(f"the stage holds no {name!r} (it holds {', '.join(HAND_ONS)})")
            setattr(self, name, mob)

    def forget(self, *names: str) -> None:
        for name in names or HAND_ONS:
            setattr(self, name, None)

    def kept(self) -> list:
        return [getattr(self, n) for n in HAND_ONS if self.has(n)]

    def attach(self, picture, *parts) -> None:
        """`parts` explain a handed-on `picture` as it stands (the key to the grid's dots, the names over the
        query columns): a chapter card between chapters keeps them with it, since the next chapter's first
        frame still shows the picture (review 52: the card cleared the dot key the grid still needed). The
        next chapter fades them itself when it changes the picture."""
        self._attached.append((picture, tuple(p for p in parts if p is not None)))

    def kept_with_parts(self) -> list:
        """The pictures handed on, and what is attached to them and still drawn."""
        kept = self.kept()
        drawn = set(map(id, self.scene.mobjects))
        parts = [p for pic, ps in self._attached if any(pic is k for k in kept) for p in ps if id(p) in drawn]
        return kept + parts

    # --- playing --------------------------------------------------------------------------
    def play(self, *animations, **kwargs):
        self.scene.play(*animations, **kwargs)

    def wait(self, seconds: float = 1.0):
        self.scene.wait(seconds)

    def add(self, *mobjects):
        self.scene.add(*mobjects)

    def remove(self, *mobjects):
        self.scene.remove(*mobjects)

    @property
    def mobjects(self) -> list:
        """What is drawn, without the camera's frame: manim adds the frame to the scene once it is
        animated, and a chapter fading out "everything" would fade the frame too (manim's skipped play
        then puts it back home, and the close-up is lost). Nor the corner key to ␣ (`space_key_for`):
        it stays while the chapters come and go."""
        frame = getattr(self.scene.camera, "frame", None)
        return [m for m in self.scene.mobjects if m is not frame and m is not self.space_key]

    @property
    def time(self) -> float:
        return float(self.scene.renderer.time)

    def space_key_for(self, chapter, trace) -> None:
        """"␣ = a space before the word" in the frame's lower right corner, for a chapter that shows a real
        model's tokens (their leading space drawn as ␣) and has no key of its own (review 34: the flagship
        on SmolLM2 drew "␣fluffy" in every frame and never said what the mark is). It stays through
        `clear`; a chapter with its own key (`own_space_key`) takes it away."""
        from .components.corner_key import keep_in_corner
        from .components.word_boxes import space_key

        away = chapter.own_space_key or not chapter.shows_tokens
        if self.space_key is not None and self.space_key in self.scene.mobjects and away:
            self.scene.remove(self.space_key)
        if away or trace is None:
            return
        if self.space_key is None:
            key = space_key(getattr(trace, "tokens", ()) or (), self.say, self.theme, font_size=20, mark_size=24)
            if key is None:
                return
            full = self.region("full")
            key.move_to([full.right - key.width / 2, full.bottom + key.height / 2, 0])
            keep_in_corner(key, self.scene)  # it follows the camera, and waits while its corner is taken
            self.space_key = key
        if self.space_key not in self.scene.mobjects:
            self.scene.add(self.space_key)

    def floor(self) -> float:
        """The bottom of the frame's full region, or the top of the corner key to ␣ where it is shown: text
        laid out down to here leaves the key its corner (review 37: a column of notes in the lower right
        hid the key while ␣-tokens were on screen)."""
        bottom = self.region("full").bottom
        key = self.space_key
        if key is not None and key in self.scene.mobjects:
            bottom = max(bottom, key.get_top()[1] + 0.15)
        return bottom

    def start_chapter(self, number: int, key: str) -> None:
        """Caption blocks are numbered per chapter: their ids are `NN_<chapter>_KK`."""
        self.chapter_number, self.chapter_key, self.block_number = number, key, 0

    def block_id(self) -> str:
        return f"{self.chapter_number:02d}_{self.chapter_key}_{self.block_number:02d}"

    @contextmanager
    def narrating(self, text: str):
        """A caption block: a sub-caption spanning exactly the plays inside the block, held on screen
        (by waiting at the end) at least as long as it takes to read in this language.

        With a narrator (render --voice / --voice-dir) the block's speech starts with the block and the
        block lasts at least the speech plus a breath: holds stretch, animations keep their pace. The
        caption is then timed to the speech itself."""
        scene = self.scene
        if self._in_block:
            raise RuntimeError("caption blocks do not nest: one block, one caption, one stretch of speech")
        self._in_block = True
        self.block_number += 1
        block = self.block_id()
        start = scene.renderer.time
        narrator = getattr(scene, "narrator", None)
        pending = narrator.speak_later(block, self.say.spoken(text)) if narrator is not None else None
        try:
            yield
        finally:
            self._in_block = False
            if pending is not None and not pending.done() and sys.exc_info()[0] is not None:
                pending.cancel()
        speech = pending.result() if pending is not None else None
        if speech is not None:  # mixed when the scene ends (scenes/sound.py)
            scene.speech_track = [*getattr(scene, "speech_track", []), (float(start), speech.path)]
        needed = len(text) / self.say.chars_per_second
        if speech is not None:
            needed = max(needed, speech.duration + BREATH_S)
        rest = needed - (scene.renderer.time - start)
        if rest > 0.05 or (speech is not None and rest > 1e-3):
            scene.wait(max(rest, 1 / config.frame_rate))  # manim renders at least one frame
        duration = scene.renderer.time - start
        shown = speech.duration if speech is not None else duration
        # what a viewer reads (the .srt/.vtt, the chapters' captions, the script): plain text, its
        # subscripts written by one convention (scenes.i18n.plain_text); what a voice says comes from
        # the catalog's own text (W_Q is said "W Q")
        written = plain_text(text)
        scene.add_subcaption(written, duration=shown, offset=start - scene.renderer.time)
        self.captions.append((written, duration))
        self.blocks.append({"id": block, "start": round(float(start), 3), "end": round(float(scene.renderer.time), 3),
                            "text": written, "spoken": self.say.spoken(text),
                            "speech": round(speech.duration, 3) if speech else None})
        if getattr(scene, "observer", None) is not None:
            scene.observer.caption_done(scene, written, start, scene.renderer.time)

    def clear(self, run_time: float = 0.5, keep: tuple = ()) -> None:
        """Fade out everything except `keep` (hand-on names or mobjects); forget what went."""
        keep_mobs = [getattr(self, k) if isinstance(k, str) else k for k in keep] + [self.space_key]
        keep_mobs = [m for m in keep_mobs if m is not None]
        going = [m for m in self.scene.mobjects if m not in keep_mobs]
        if going:
            self.scene.play(*(FadeOut(m) for m in going), run_time=run_time)
            self.scene.remove(*going)
        for name in HAND_ONS:
            if getattr(self, name) is not None and getattr(self, name) not in keep_mobs:
                setattr(self, name, None)
