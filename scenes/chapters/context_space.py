"""`mole` and `eiffel_tower`: one word in several phrases. First its lookup column, the same in
every phrase (`SameLookup`); then, in a space of three of the model's named directions, the
generic arrow and per phrase the real attention (arcs), the head's ΔE and the refined E′
(`ContextSpace`). Both chapters take the lesson's `ContextVariant` (the word, the default axes)."""

from __future__ import annotations

import numpy as np
from manim import DEGREES, DOWN, LEFT, RIGHT, UP, FadeIn, FadeOut, FadeTransform, VGroup, Write, config

from ..components.clearance import box_of, clearance
from ..components.context_arcs import ContextArcs
from ..components.pictures import mole_animal, tower
from ..components.text import baseline_row, label, number, text_baseline
from ..components.vectors import VectorColumn, math, symbol_source
from ..components.word_boxes import WordBoxes
from ..plans.rounding import decimals_that_round_back, misses
from ..review import declare_sum
from ..lesson import Chapter
from ..plans.context_space import ContextPlan, ContextVariant, LookupPlan, Phrase, plan_context, plan_lookup
from ..plans.honesty import note_text
from ..stage import Region, Stage
from .honest import wrapped
from .embedding_parts import (
    arc_angle, attention_caption, axis_lines_turned, causal_lines, clear_at, clearest_turn, delta_caption, direction_name,
    speck_free,
    fit_into,
    framed,
    label_boxes_turned,
    mixed_label,
    placed_space, room_left_of, tag_text, vector_label, word_weights,
)

T = "embeddings.context"


def cover(box, table) -> list:
    """The table steps aside while a note that took its place is shown (`lower_left`)..."""
    return [FadeOut(table)] if getattr(box, "covers_table", False) else []


def uncover(box, table) -> list:
    """...and comes back as it was (rows not yet shown stay hidden: FadeIn restores its state)."""
    return [FadeIn(table)] if getattr(box, "covers_table", False) else []
# a small picture beside a lesson's phrases: the chapter that shows it, and the drawing
PICTURES = {"mole": ("same_lookup", mole_animal), "tower": ("context_space", tower)}
# the closing turn of the space, there and back: of these, the one where the refined E′s stand furthest apart (`clearest_turn`)
GHOST_LABEL = 0.55  # an earlier phrase's E′ label, while a later phrase is read
TURNS = tuple(s * a * DEGREES for a in (20, 35, 50) for s in (-1, 1))
# and wider ones, taken only where they keep clear of what stands beside the space (review 35: at ±50° at
# most, "Paris" stood by E′ (alone) on every turn; at 80° it stands apart)
WIDE_TURNS = tuple(s * a * DEGREES for a in (65, 80) for s in (-1, 1))


def place_picture(stage: Stage, key: str, focus: str, height: float, anchor: VGroup | None = None):
    """The variant's picture if this chapter shows one: left of `anchor` (else in the top-left corner)."""
    chapter, make = PICTURES.get(focus, (None, None))
    if chapter != key:
        return None
    full = stage.region("full")
    pic = make(stage.theme, height=height)
    if anchor is not None:
        room = anchor.get_left()[0] - full.left - 0.3
        if pic.width > room:
            pic.scale_to_fit_width(max(room, 0.4))
        pic.move_to([full.left + pic.width / 2, anchor.get_center()[1], 0])
    else:
        pic.move_to([full.left + pic.width / 2, full.top - pic.height / 2, 0])
    stage.drawn.setdefault(key, {})["picture"] = pic
    return pic


class SameLookup(Chapter):
    """The phrases, stacked, and the focus word's lookup column in each: identical."""

    key = "same_lookup"

    def __init__(self, variant: ContextVariant):
        self.variant = variant

    def plan(self, setting) -> LookupPlan:
        return plan_lookup(setting, self.variant)

    def play(self, stage: Stage, plan: LookupPlan) -> None:
        if not plan.show:
            return
        th, say = stage.theme, stage.say
        stage.clear()
        n = len(plan.phrases)
        word = say.quote(plan.word)
        full = stage.region("full")
        ys = np.linspace(3.3, 3.3 - 0.75 * (n - 1), n)
        rows = VGroup()
        for k, (tokens, focus, y) in enumerate(zip(plan.phrases, plan.focus, ys)):
            r = WordBoxes(tokens, theme=th, font_size=28, max_width=full.width - 1.7).move_to([0.4, y, 0])
            r.highlight(focus, th.query)
            tag = label(str(k + 1), font_size=22, color=th.dim).next_to(r, LEFT, buff=0.3)
            rows.add(VGroup(tag, r))
        cols = VGroup()
        xs = np.linspace(-2.4 * (n - 1) / 2, 2.4 * (n - 1) / 2, n)
        top = ys[-1] - 0.75
        for k, (values, x) in enumerate(zip(plan.columns, xs)):
            c = VectorColumn(values, head=4, tail=1, font_size=22, theme=th, brace=(k == n - 1),
                             brace_text=say("embeddings.tokens.brace", count=plan.d_model))
            c.shift(RIGHT * (x - c.brackets.get_x()))
            c.set_y(top - 0.35 - c.brackets.height / 2 - (c.get_top()[1] - c.brackets.get_top()[1]))
            tag = label(say(f"{T}.column_tag", word=word, number=k + 1), font_size=20, color=th.query)
            fit_into(tag, 2.2, 1).next_to(c.brackets, UP, buff=0.12)
            cols.add(VGroup(tag, c))
        cols.set_x(0)
        eqs = VGroup(*(label("=", font_size=34, color=th.text).move_to(
            (cols[k][1].brackets.get_right() + cols[k + 1][1].brackets.get_left()) / 2) for k in range(n - 1)))
        note = label(say(f"{T}.lookup_identical" if plan.identical else f"{T}.lookup_differ"), font_size=24,
                     color=th.highlight if plan.identical else th.value)
        fit_into(note, full.width, 1).next_to(cols, DOWN, buff=0.35)
        pos_key = "position_rotary" if plan.rotary else "position_shifts" if plan.position_visible else "position_unseen"
        pos_note = label(say(f"{T}.{pos_key}"),
                         font_size=18, color=th.dim)
        fit_into(pos_note, full.width, 1).next_to(note, DOWN, buff=0.15)
        stage.drawn[self.key] = {"rows": rows, "columns": cols, "note": note}
        pic = place_picture(stage, self.key, self.variant.focus, 1.1, anchor=rows)
        pics = [pic] if pic is not None else []
        with stage.narrating(say(f"{T}.caption_phrases", count=n, word=word)):
            stage.play(FadeIn(rows, lag_ratio=0.25), *(FadeIn(p) for p in pics), run_time=1.5)
            stage.wait(0.8)
        caption = f"{T}.caption_lookup_identical" if plan.identical else f"{T}.caption_lookup_differ"
        with stage.narrating(say(caption, word=word)):
            stage.play(FadeIn(cols, lag_ratio=0.15, shift=DOWN * 0.2), run_time=1.2)
            stage.play(FadeIn(eqs), Write(note), run_time=0.8)
            stage.play(FadeIn(pos_note), run_time=0.5)
            stage.wait(1.6)
        # the next chapter's stage.clear() fades all this out: the chapter ends on its full frame


def lower_left(box: VGroup, table: VGroup, notes: list, right: float | None = None) -> VGroup:
    """`box` in the lower left: under the table, over the notes at the bottom (never on them), and
    left of `right` (the space's labels: a box touching "화학" read as one line with it)."""
    texts = [n for n in notes if n is not None and n.get_x() < 0 and n.get_y() < 0]
    floor = max(n.get_top()[1] for n in texts) + 0.15 if texts else -3.9
    ceiling = table.get_bottom()[1] - 0.15
    # where the room under the table would shrink its text (a real model's notes under a tall table),
    # it takes the table's place while it is shown (box.covers_table: the caller fades the table)
    box.covers_table = box.height > 0.9 * (ceiling - floor)
    if box.covers_table:
        ceiling = table.get_top()[1]
    width = 5.8 if right is None else min(5.8, right - (-config.frame_width / 2 + 0.4))
    fit_into(box, width, max(ceiling - floor, 1.0))
    box.to_edge(LEFT, buff=0.4).set_y(ceiling - box.height / 2 if box.covers_table else (ceiling + floor) / 2)
    return box


def head_note_text(say, plan: ContextPlan) -> str:
    """The note naming the head whose ΔE the space draws: its layer, number and role (a head without a
    role is named once)."""
    role = say.role(plan.role, plan.head.layer, plan.head.head)
    if role == say.head_name(plan.head.layer, plan.head.head):
        return say(f"{T}.head_note_plain", layer=plan.head.layer, head=plan.head.head)
    return say(f"{T}.head_note", layer=plan.head.layer, head=plan.head.head, role=role)


class ContextSpace(Chapter):
    key = "context_space"

    def __init__(self, variant: ContextVariant):
        self.variant = variant

    def plan(self, setting) -> ContextPlan:
        return plan_context(setting, self.variant)

    def play(self, stage: Stage, plan: ContextPlan) -> None:
        th, say = stage.theme, stage.say
        stage.clear()
        full = stage.region("full")
        word = say.quote(plan.word)
        # a real model's axes are words (their unembedding rows), shown as the model spells them
        names = list(plan.unembedding) or [direction_name(say, n, plan.trace.tokens) for n in plan.axes]
        box = Region("space", -0.9, full.right - 0.86, full.bottom + 0.6, 2.2)
        space = placed_space(plan.trace, say, th, plan.axes, plan.fit, plan.view, box, axis_text=names)
        head_note = vector_label(head_note_text(say, plan), font_size=20, color=th.delta)
        fit_into(head_note, full.width / 2 - 0.6, 0.5).to_corner(DOWN + LEFT, buff=0.3)
        notes = [head_note]
        if plan.unembedding:  # say on screen what the axes are
            text = say("real.axes.note", axes=say.quoted_words(plan.unembedding))
            axes_note = mixed_label(text, font_size=20, color=th.dim)
            if axes_note.width > full.width / 2 - 0.6:  # over two lines at its size, not shrunk to 11 px
                words = text.split(" ")  # broken where the two lines come out most even
                cut = min(range(1, len(words)), key=lambda c: abs(len(" ".join(words[:c])) - len(" ".join(words[c:]))))
                axes_note = VGroup(mixed_label(" ".join(words[:cut]), font_size=20, color=th.dim),
                                   mixed_label(" ".join(words[cut:]), font_size=20, color=th.dim)
                                   ).arrange(DOWN, aligned_edge=LEFT, buff=0.08)
            fit_into(axes_note, full.width / 2 - 0.6, 0.75).next_to(head_note, UP, buff=0.15, aligned_edge=LEFT)
            notes.append(axes_note)
        if plan.inputs_differ:  # the layer's input is no longer the lookup: say so on screen
            input_note = vector_label(say(f"{T}.input_note", layer=plan.head.layer), font_size=20, color=th.dim)
            fit_into(input_note, full.width / 2 - 0.6, 0.5).next_to(notes[-1], UP, buff=0.15, aligned_edge=LEFT)
            notes.append(input_note)
        # the arrows' labels keep off the notes under the space's left end, and off the corner key (review 37)
        space.avoid = list(notes) + ([stage.space_key] if stage.space_key is not None else [])
        drawn = {"space": space, "arrows": [], "arcs": [], "tables": [], "causal": [], "head_note": head_note,
                 "axes_note": notes[1] if len(notes) > 1 else None, "input_note": notes[-1] if plan.inputs_differ else None}
        stage.drawn[self.key] = drawn
        pic = place_picture(stage, self.key, self.variant.focus, 1.0)
        notes += [pic] if pic is not None else []

        generic = space.arrow(plan.phrases[0].E, th.embedding, symbol_source("E"), name="E", attach=False)
        drawn["arrows"].append((0, "E", generic))
        axes_caption = (say("real.axes.caption", axes=say.quoted_words(names)) if plan.unembedding
                        else say(f"{T}.caption_axes", axes=say.words(names)))
        with stage.narrating(axes_caption):
            stage.play(FadeIn(space), FadeIn(space.axis_labels), *(FadeIn(n) for n in notes), run_time=1.0)
        generic_key = "caption_generic_layer" if plan.inputs_differ else "caption_generic"
        with stage.narrating(say(f"{T}.{generic_key}", word=word, layer=plan.head.layer)):
            stage.play(space.grow_arrow(generic), run_time=0.9)
            stage.wait(0.8)

        row = table = None
        prev: list = []
        for k, s in enumerate(plan.phrases):
            # (a little higher than the space's top needs: the weights under the words clear it, review 46)
            new_row = WordBoxes(s.tokens, theme=th, font_size=32, max_width=full.width - 1.1).move_to([0, 3.05, 0])
            new_row.highlight(s.focus, th.query)
            new_table = axes_table(stage, s, names)
            t_title = label(say(f"{T}.table_title", word=word), font_size=20, color=th.dim)
            t_title.next_to(new_table, UP, buff=0.25).align_to(new_table, LEFT)
            new_table.add(t_title)
            new_table.cells[1].set_opacity(0)
            new_table.cells[2].set_opacity(0)
            drawn["tables"].append(new_table)
            own_E = None
            earlier_E = [a for _, kind, a in drawn["arrows"] if kind == "E"]
            if s.own_E:  # this phrase's own E when it differs from the generic one on these axes: it takes
                # the name E⃗ (the table's E⃗ row is this one), the earlier Es dim and drop theirs
                own_E = space.arrow(s.E, th.embedding, symbol_source("E"), name=f"E{k}", attach=False)
                own_E.kind = "E"
                drawn["arrows"].append((k, "E", own_E))
            intro = [FadeIn(new_row) if row is None else FadeTransform(row, new_row),
                     FadeIn(new_table) if table is None else FadeTransform(table, new_table)]
            if own_E is not None:
                intro += [a.animate.set_opacity(0.35) for a in earlier_E]
                intro += [space.fade_out_label(a) for a in earlier_E
                          if getattr(a, "label", None) is not None and a.label in stage.mobjects]
            if prev:
                # the earlier phrase's E′ stays, dimmed, to compare with; its ΔE leaves until the closing turn
                # (review 38: dimmed, the earlier ΔEs boxed in the new one and crossed its name's line)
                intro += [a.animate.set_opacity(0.35 if a.kind == "E2" else 0) for a in prev]
                intro += [space.fade_out_label(a) for a in prev if getattr(a, "label", None) is not None and a.kind == "dE"]
                # the earlier phrase's E′ stays named, dimmed with its arrow (review 34: at full brightness
                # its name outshone the phrase now read)
                intro += [a.label.animate.set_opacity(GHOST_LABEL) for a in prev
                          if a.kind == "E2" and getattr(a, "label", None) is not None]
            with stage.narrating(say(f"{T}.caption_phrase", number=k + 1, phrase=" ".join(s.tokens))):
                stage.play(*intro, run_time=0.9)
                if own_E is not None:
                    stage.play(space.grow_arrow(own_E), run_time=0.6)
            row, table = new_row, new_table

            # arcs into the focus word from the words before it (the mask hides the rest)
            srcs = [row.box(j) for j in range(s.focus + 1)]
            tgt = row.box(s.focus)
            # the arcs rise as far as they stay inside the frame (0.1 margin); each weight is written under
            # the word its arc leaves, the focus word's own "self" with them (review 46)
            # (into the frame's margin: the arcs leave 0.08 over the boxes, and their strokes stay 0.1 inside the edge)
            rise = min(0.62, full.top - max(b.get_top()[1] for b in srcs))
            ang = arc_angle([b.get_top() for b in srcs], tgt.get_top(), max_rise=rise)
            arcs = ContextArcs(srcs, tgt, s.weights[: s.focus + 1], theme=th, angle=ang, max_stroke=12)
            wl = word_weights(say, th, s.weights, srcs, s.focus,
                              after=row.box(s.focus + 1) if s.focus + 1 < len(s.tokens) else None)
            drawn["arcs"].append(arcs)
            drawn.setdefault("weights", []).append(wl)
            with stage.narrating(attention_caption(say, s)):
                stage.play(arcs.grow(run_time=1.0), FadeIn(wl))
                stage.play(arcs.pulse(run_time=1.0))
            honest = note_text(say, s.honesty, s.tokens) if s.honesty is not None else None
            if honest:  # a real head resting on the first token, or on the word itself: say so, on screen too
                drawn.setdefault("honest", []).append(honest)
                plate = framed(wrapped(honest, 5.4, 22, th.text, max_lines=6), th, th.dim)
                lower_left(plate, table, notes, right=room_left_of(space, 0.2))
                drawn.setdefault("honest_plates", []).append(plate)
                with stage.narrating(honest):
                    stage.play(FadeIn(plate, shift=UP * 0.1), *cover(plate, table), run_time=0.6)
                    stage.wait(1.0)
                stage.play(FadeOut(plate), *uncover(plate, table), run_time=0.4)
                stage.remove(plate)
            if s.causal is not None:
                self.causal_note(stage, s, row, word, table, notes)

            dE = space.difference_arrow(s.E, s.E2, th.delta, speck_free(space, s.E, s.E2, symbol_source("E", delta=True)),
                                        name=f"dE{k}", attach=False)
            E2 = space.arrow(s.E2, th.updated, vector_label(tag_text(say, s.tag), 24, th.updated), name=f"E2_{k}",
                             attach=False)
            for a in (dE, E2):  # labels stay readable where they cross an arrow or an axis
                if a.label is not None:
                    a.label.add_background_rectangle(color=th.background, opacity=0.7, buff=0.05)
            dE.kind, E2.kind = "dE", "E2"
            drawn["arrows"] += [(k, "dE", dE), (k, "E2", E2)]
            with stage.narrating(delta_caption(say, f"{T}.caption_delta", s.delta, s.coords[1], names)):
                stage.play(space.grow_arrow(dE), table.cells[1].animate.set_opacity(1), run_time=1.0)
            # the toy's heads are built to give the phrase's sense; a real head is one of many
            refined = "caption_refined_one_head" if plan.trace.model.real else "caption_refined"
            with stage.narrating(say(f"{T}.{refined}", word=word)):
                stage.play(space.grow_arrow(E2), table.cells[2].animate.set_opacity(1), run_time=0.9)
                # ΔE stays drawn over E′ (the scene draws what was added last on top: E′ as it grew): where ΔE
                # runs along E′ (the mole's +7.9 along medicine, up to E′ (biopsy)) E′ hid it in the frame that
                # says E′ = E + ΔE (review 38, MF10), and its tip, on E′'s, had no head (review 40)
                # (in the space's own order too: a later turn of the space draws it anew, in that order)
                space.remove(dE)
                space.add(dE)
                stage.add(dE)
                inset = tip_inset(stage, space, own_E if own_E is not None else earlier_E[-1], dE, E2, [table, *notes, row])
                if inset is not None:  # a head that barely moves the word: its tips, enlarged (review 46)
                    drawn.setdefault("insets", []).append(inset)
                    stage.add(inset.tie)
                    stage.scene.bring_to_back(inset.tie)  # under the arrows and the labels it passes
                    stage.play(FadeIn(inset), FadeIn(inset.tie), run_time=0.5)
                stage.wait(0.9)
            if s.compare is not None:
                comparison(stage, s, k, table, names,
                                input_part=plan.phrases[k - 1] if plan.inputs_differ else None,
                                previous=plan.phrases[k - 1])
            stage.play(FadeOut(arcs), FadeOut(wl), *([FadeOut(inset), FadeOut(inset.tie)] if inset is not None else []),
                       run_time=0.4)
            prev = [dE, E2]

        # the end: all refined arrows, the space turning
        # a head whose ΔE is a stub on every phrase is said to barely move the word (measured, plan)
        closing = (f"{T}.closing_small_delta" if plan.small_delta else
                   f"{T}.closing_own_direction" if plan.own_direction else f"{T}.closing_own_delta")
        closing_text, against = say(closing, word=word), VGroup()
        if plan.against:  # the lesson's own phrases moved the word against their story: said, and shown
            # in the table's place (its figures, and the comparisons under it, are what the note reads)
            said = against_text(stage, plan, names, word)
            closing_text += " " + said
            against = wrapped(said, table.width + 0.3, 24, th.highlight, 9)  # (with its figures: review 47)
            top_y = table.get_top()[1]
            # down to the notes under the table (the picture in the corner is a note above it)
            floor = max((n.get_top()[1] for n in notes if n.get_center()[1] < table.get_center()[1]),
                        default=full.bottom)
            fit_into(against, table.width + 0.3, max(0.5, top_y - floor - 0.3))
            against.move_to([table.get_left()[0] + against.width / 2, top_y - against.height / 2, 0])
            drawn["against"] = against
            space.avoid.append(against)  # the turning space's names keep off it (review 37: "small" on it, pt)
        with stage.narrating(closing_text):
            stage.play(*([FadeIn(against), FadeOut(table)] + [FadeOut(b) for b in drawn["causal"] if b in stage.mobjects]
                         if len(against) else []),
                       *(a.animate.set_opacity(1) for _, kind, a in drawn["arrows"] if kind == "E2"),
                       # every phrase's ΔE is back, the earlier ones dimmed: each moved the word its own way
                       *(a.animate.set_opacity(0.35) for k, kind, a in drawn["arrows"]
                         if kind == "dE" and k < len(plan.phrases) - 1),
                       *(a.label.animate.set_opacity(1) for _, kind, a in drawn["arrows"] if kind == "E2" and a.label is not None),
                       # the names of ΔE and E leave: the turn is about the refined E′s, their labels take the room (review 37)
                       *(space.fade_out_label(a) for _, kind, a in drawn["arrows"] if kind in ("dE", "E")
                         and a.label is not None and not a.label.gone), run_time=0.5)
            # wider turns too, where they keep clear of the table's rows (or the note) and the notes beside the
            # space; the comparison under the table, said before, then makes room
            cmps = [m for m in drawn.get("comparisons", []) if not len(against)]
            rows = VGroup(*(m for m in table if not any(m is c for c in cmps)))
            wide = tuple(t for t in WIDE_TURNS if clear_at(space, t, [against if len(against) else rows, *notes]))
            turn = clearest_turn(space, [a for _, kind, a in drawn["arrows"] if kind == "E2"], TURNS + wide)
            if turn in wide and cmps:
                stage.play(*(FadeOut(c) for c in cmps), run_time=0.4)
            drawn["turn"] = turn
            stage.play(space.rotation(turn, run_time=2.5))
            stage.wait(0.5)
        # and back when a next chapter starts: the last frame shows the space turned, as the caption says
        stage.on_leave(lambda: stage.play(space.rotation(-turn, run_time=2.0)))

    # --- pieces ---------------------------------------------------------------------------------
    def causal_note(self, stage: Stage, s: Phrase, row: WordBoxes, word: str, table: VGroup, notes: list):
        """The words after the focus are masked for it; what they say can only flow forward."""
        th, say = stage.theme, stage.say
        box = framed(causal_lines(say, s), th, th.mask, font_size=22)
        # (0.4 clear of the space: at 0.2, the box stood 17 px from ko's "화학", review 51)
        lower_left(box, table, notes, right=room_left_of(stage.drawn[ContextSpace.key]["space"], 0.4))
        stage.drawn[ContextSpace.key]["causal"].append(box)
        later = list(s.causal.later)
        with stage.narrating(say(f"{T}.caption_causal", word=word, after=say.quote(s.causal.after))):
            stage.play(row.animate.recolor(later, th.mask), FadeIn(box), *cover(box, table), run_time=0.7)
            stage.wait(2.5)
        stage.play(FadeOut(box), row.animate.recolor(later, th.dim), *uncover(box, table), run_time=0.5)


def figures_label(text: str, figures, color: str):
    """A label that writes figures in a sentence ("(8,154 → 3,349)"), saying their values to the lint (a Portuguese
    three-decimal "8,154" looks like an English thousands comma)."""
    mob = label(text, font_size=22, color=color)
    mob.figures = tuple(float(f) for f in figures)
    return mob


def comparison(stage: Stage, s: Phrase, k: int, table: VGroup, names: list[str],
               input_part: Phrase | None = None, previous: Phrase | None = None):
    """Under the table: this phrase's E′ (phrase k + 1) minus the previous phrase's, on each axis.
    The phrases are named by number (the captions' "Phrase 2"): written out, a real model's
    tokens make the label too long to read."""
    th, say = stage.theme, stage.say
    before = say.quote(" ".join(s.compare.before))
    # the change is the unrounded E′s' difference; where it differs from the difference of the two
    # tables' rounded E′s (7.7 − 0.0 shown, +7.6 measured), the label says it is taken before rounding
    exact = previous is None or not any(misses((a, -b), c)
                                        for c, a, b in zip(s.compare.change, s.coords[2], previous.coords[2]))
    # (mixed: "E′" in the serif beside Hangul; in the Korean face its prime stood apart, "E´ 변화": review 40)
    vs = vector_label(say(f"{T}.compare_label" if exact else f"{T}.compare_label_unrounded", before=k, now=k + 1),
                     22, th.dim)
    # taken before rounding, it is written to two decimals: "+7.64" beside tables whose rounded E′s
    # differ by 7.7 reads as what it is, not as a slip; to three where an E′ at two would round back to
    # another figure than its table's (eiffel: "3.35" beside the table's +3.3, review 52)
    places = 2 if exact else decimals_that_round_back([*previous.coords[2], *s.coords[2]])
    kind = "vec" if exact else f"signed{places}"
    # the room under the table, above the notes: the figures with their E′s where it holds them
    marked = stage.drawn[ContextSpace.key]
    floor = max((marked[k].get_top()[1] for k in ("head_note", "axes_note", "input_note") if marked.get(k) is not None),
                default=stage.region("full").bottom) + 0.3  # (0.12 apart, it read as one paragraph with them: review 37)
    one_line = exact or table.get_bottom()[1] - 0.45 - floor < 2.0  # no room for a line per figure
    change = list(s.compare.change)
    if one_line:
        nums = baseline_row([baseline_row([label(n, font_size=22, color=th.dim),
                                           number(c, kind, font_size=24, color=th.updated)], buff=0.12)
                             for n, c in zip(names, s.compare.change)], buff=0.4)
    else:  # each change with the two E′s it comes from, to two decimals: a student can subtract them
        # (review 34: "+4.80" beside tables whose one-decimal E′s differ by 4.9 looked like a slip). The change
        # is the difference of the two as written: 3.349 − 8.154 is −4.805 on screen, not the unrounded −4.8045
        # written −4.804 (review 53)
        change = [round(float(b), places) - round(float(a), places) for a, b in zip(previous.coords[2], s.coords[2])]
        nums = VGroup(*(baseline_row([label(n, font_size=22, color=th.dim),
                                      number(c, kind, font_size=24, color=th.updated),
                                      # (both to the change's decimals: four among two read as a
                                      # formatting slip, reviews 51-52; the heading says "before rounding")
                                      figures_label(f"({say.number(a, f'.{places}f')} → {say.number(b, f'.{places}f')})"
                                                    .replace("-", "−"), (a, b), th.dim)], buff=0.12)
                        for n, c, a, b in zip(names, change, previous.coords[2], s.coords[2])))
        nums.arrange(DOWN, aligned_edge=LEFT, buff=0.08)
    most = None
    if input_part is not None:  # the layer's inputs differ: say how much of the change is the head's
        heads = s.coords[1] - input_part.coords[1]
        if np.abs(heads).max() < 0.5 * np.abs(s.compare.change).max():  # "most of that": measured
            # the head's share as the two tables' ΔE rows show it (one decimal each): a student
            # subtracts the drawn +0.1 and −0.1 and finds 0.2, not the unrounded 0.14; on screen too
            drawn_heads = np.round(s.coords[1], 1) - np.round(input_part.coords[1], 1)
            most = say.number(float(np.abs(drawn_heads).max()), ".1f")
    # over two lines where long (one line shrank the whole panel under the text size)
    share = [wrapped(say(f"{T}.compare_head_share", most=most), max(vs.width, nums.width, 3.6), 22, th.delta, 2,
                     setter=vector_label)
             ] if most else []
    cmp = VGroup(vs, nums, *share).arrange(DOWN, aligned_edge=LEFT, buff=0.12)
    # clear of the space and its axis names (they swing round when the space turns)
    space = stage.drawn[ContextSpace.key]["space"]
    room = room_left_of(space) - table.get_left()[0]
    tall = 1.0 + (0.35 if share else 0.0) + (0.0 if one_line else 0.6)
    fit_into(cmp, min(5.6, room), tall).next_to(table, DOWN, buff=0.45).align_to(table, LEFT)
    # an axis name that swings over it when the space turns at the end: go below that name
    x0, x1 = cmp.get_left()[0] - 0.1, cmp.get_right()[0] + 0.1
    for bx0, by0, bx1, by1 in label_boxes_turned(space, TURNS):
        if bx0 < x1 and bx1 > x0 and by0 < cmp.get_top()[1] + 0.1 and by1 > cmp.get_bottom()[1] - 0.1:
            cmp.shift(DOWN * (cmp.get_top()[1] - by0 + 0.15))
    # an axis line that swings across it: go down until clear of its drawn edge
    lines = axis_lines_turned(space, TURNS)
    for _ in range(12):
        if clearance(box_of(cmp), lines) >= 0.1:
            break
        cmp.shift(DOWN * 0.1)
    # never onto the notes under it (the turn comes at the end; a lesson that owns up to its story
    # then shows its note in the table's place)
    drawn = stage.drawn[ContextSpace.key]
    notes = [drawn.get(k) for k in ("head_note", "axes_note", "input_note") if drawn.get(k) is not None]
    # (a line's gap over them: 10 px apart, the two read as one paragraph, review 37)
    floor = max((n.get_top()[1] for n in notes), default=-4.0) + 0.3
    if cmp.get_bottom()[1] < floor:
        cmp.shift(UP * (floor - cmp.get_bottom()[1]))
    ceiling = table.get_bottom()[1] - 0.12  # and never onto the table's footnote: squeezed, a little smaller
    if cmp.get_top()[1] > ceiling and ceiling - floor > 0.5 * cmp.height:
        cmp.scale((ceiling - floor) / cmp.height, about_point=[cmp.get_left()[0], floor, 0])
    table.add(cmp)
    stage.drawn[ContextSpace.key].setdefault("comparisons", []).append(cmp)
    text = delta_caption(say, f"{T}.caption_compare", s.compare.terms, change, names,
                         spec="+.1f" if exact else f"+.{places}f", before=before)
    if most is not None:
        text += " " + say(f"{T}.compare_input", most=most)
    with stage.narrating(text):
        stage.play(FadeIn(cmp), run_time=0.6)
        stage.wait(0.6)


def axes_table(stage: Stage, phrase: Phrase, names: list[str]) -> VGroup:
    """Rows E, ΔE, E′ × the three axes: the real projections (what the arrows show)."""
    th = stage.theme
    header = [label(n, font_size=20, color=th.text) for n in names]
    step_x = max(1.45, max(h.width for h in header) + 0.35)
    col_x = [k * step_x for k in range(3)]
    for h, x in zip(header, col_x):
        h.move_to([x, 0, 0])
    for h in header[1:]:  # one baseline, whatever the descenders
        h.shift(UP * (text_baseline(header[0]) - text_baseline(h)))
    rows, cells = VGroup(), []
    sources = (symbol_source("E"), symbol_source("E", delta=True), symbol_source("E", prime=True))
    for r, (src, color, c) in enumerate(zip(sources, (th.embedding, th.delta, th.updated), phrase.coords)):
        y = -0.5 * (r + 1)
        sym = math(src, font_size=26, color=color).move_to([-1.2, y, 0])
        nums = VGroup(*(number(c[k], "vec", font_size=22, color=color).move_to([col_x[k], y, 0])
                        for k in range(3)))
        cells.append(nums)
        rows.add(VGroup(sym, nums))
    # E + ΔE = E′ on each axis as drawn: where the rounded figures miss, E′ is marked ≈ and a note
    # says why (both come in with the E′ row); the lint checks every column adds up or is marked
    e, d, e2 = phrase.coords[:3]
    marks = {}
    for k in range(3):
        if misses((float(e[k]), float(d[k])), float(e2[k])):
            marks[k] = label(stage.say("common.rounding.mark"), 22, th.dim).next_to(cells[2][k], LEFT, buff=0.06)
    t = VGroup(VGroup(*header), rows, *marks.values())
    fit_into(t, 5.0, 3.0).to_edge(LEFT, buff=0.55).set_y(0.55)
    for k in range(3):
        declare_sum(t, [cells[0][k], cells[1][k]], cells[2][k], [marks[k]] if k in marks else [], name=f"axis {k}")
    cells[2].add(*marks.values())
    if marks:
        note = fit_into(label(stage.say("common.rounding.cells"), 18, th.dim), t.width, 0.4)
        note.next_to(t, DOWN, buff=0.12).align_to(t, LEFT)
        cells[2].add(note)
    t.cells = cells
    return t


CLUMP = 0.45  # a ΔE⃗ drawn shorter than this (scene units, two cone tips) leaves E⃗'s and E⃗′'s tips in one clump
ENLARGED_LEAST = 0.45  # and enlarged, at least this long, or the inset shows a point


def tip_inset(stage: Stage, space, E, dE, E2, avoid: list):
    """Where the head's ΔE⃗ is drawn too short to see beside the tips it joins, those tips enlarged by a round
    factor in a box on the right of the space (else None)."""
    from ..components.tip_inset import TipInset

    if float(np.linalg.norm((dE.end_point() - dE.start_point())[:2])) >= CLUMP:
        return None
    full, half = stage.region("full"), 0.9
    spots = [np.array([full.right - half - dx, y, 0.0]) for dx in (0.2, 0.8) for y in (-1.7, -1.2, -2.2, -0.6, 0.0)]
    # else a smaller box on the left, under the table (SmolLM2 with our own sentence: the right's axes left no
    # room, and the box fell on the axis name "small")
    smaller = [(np.array([full.left + 0.75 + dx, y, 0.0]), 0.75) for dx in (0.3, 1.0, 1.7) for y in (-1.5, -1.3, -1.7)]
    shown = space.shown_arrows()
    labels = [a.label for a in shown if getattr(a, "label", None) is not None and a.label in stage.mobjects]
    keys = [stage.space_key] if stage.space_key is not None else []
    th = stage.theme
    names = {a: math(symbol_source("E", delta=a is dE, prime=a is E2), 26, color)
             for a, color in ((E, th.embedding), (dE, th.delta), (E2, th.updated))}
    inset = TipInset.beside(shown, (dE.start_point(), dE.end_point()), th,
                            lambda k: stage.say(f"{T}.enlarged", factor=k), spots,
                            avoid=[*avoid, *space.axis_labels, *labels, *keys],
                            strokes=[space.axis_lines, *shown], names=names, half=half, smaller=smaller)
    # a ΔE⃗ that even the largest round factor leaves a stub (the mole's 0.0 on every axis) is no use enlarged:
    # its names piled on one point (review 47); the table's zeros say it
    enlarged = inset.factor * float(np.linalg.norm((dE.end_point() - dE.start_point())[:2]))
    return inset if enlarged >= ENLARGED_LEAST else None


def against_text(stage: Stage, plan: ContextPlan, names: list[str], word: str) -> str:
    """One sentence: where, on this model, the phrases moved the word against their story."""
    say = stage.say
    items, last = [], None
    for k, axis, move in plan.against:
        moved = any(s.compare for s in plan.phrases[1:2])
        kind = ("toward" if move > 0 else "away") if moved else ("more" if move > 0 else "less")
        # the move as the tables draw it, so a student can check it (review 46: which move was meant was unclear)
        figure = say.number(move, "+.1f")
        if moved and k == last:  # a second move of one phrase joins its first (review 40: "with phrase 3" twice)
            items[-1] += say(f"{T}.against_also_{kind}", axis=say.quote(names[axis]), move=figure)
        else:
            items.append(say(f"{T}.against_{kind}", phrase=k + 1, word=word, axis=say.quote(names[axis]),
                             move=figure, previous=k))
        last = k
    return say(f"{T}.against", items="; ".join(items), word=word)
