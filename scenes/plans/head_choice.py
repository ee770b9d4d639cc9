"""Why a lesson shows the head it shows, when it is not the head of the lesson's own role (no manim).

A lesson picks its head by role ("adjectives → nouns"): the head the model names (the toy) or the probes
measured (model/probes.py) for it. A model with none for it, a vocabulary without the role's probe words
or no head scoring enough on its probe, falls back to a head measured for a structural role
(model/trace.py `choose_head`: previous token, induction, same word, first token), and the lesson
says so before its first chapter: which role could not be measured, why (the `RoleGap` the model side
measured: the words the vocabulary lacks, or the best score against the threshold), and which head it
shows instead. Every word is the catalog's (`common.head_choice`).
"""

from __future__ import annotations

from attention_manim.model.trace import HeadChoice, RoleGap

T = "common.head_choice"
MAX_WORDS = 3  # missing probe words named; more are counted


def role_words(say, role: str) -> str:
    """A role in words: the lessons' own names (`common.roles`), else the structural roles' names."""
    key = f"common.roles.{role}"
    return say(key) if say.has(key) else say(f"{T}.roles.{role}")


def reason_text(say, gap: RoleGap) -> str:
    """Why the model has no head for the role, as a clause of the note."""
    if gap.reason == "missing_words" and gap.words:
        named = list(gap.words[:MAX_WORDS])
        key = "missing_words" if len(gap.words) == len(named) else "missing_words_more"
        return say(f"{T}.reason.{key}", words=say.quoted_words(named), count=len(gap.words))
    if gap.reason == "below_threshold":
        layer, head = gap.best_head or (0, 0)
        return say(f"{T}.reason.below_threshold", threshold=gap.threshold, best=gap.best,
                   head=say.head_name(layer, head))
    reason = gap.reason if say.has(f"{T}.reason.{gap.reason}") else "unmeasured"
    return say(f"{T}.reason.{reason}")


def note_text(say, choice: HeadChoice | None) -> str | None:
    """The note a lesson shows when its head is not its role's own (None when it is, or when the
    user named the head)."""
    if choice is None or not choice.fell_back:
        return None
    gap = choice.gap or RoleGap("unmeasured")
    head = say.head_name(choice.layer, choice.head)
    asked = role_words(say, choice.asked)
    reason = reason_text(say, gap)
    if not choice.role:
        return say(f"{T}.nothing", asked=asked, reason=reason, head=head)
    if say.has(f"common.roles.{choice.role}"):  # named through say.role: the lint checks it was measured
        shown = say.role(choice.role, choice.layer, choice.head)
    else:
        shown = role_words(say, choice.role)
    return say(f"{T}.fallback", asked=asked, reason=reason, role=shown, head=head)
