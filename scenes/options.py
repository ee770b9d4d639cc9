"""Which of the user's options a lesson really uses, measured rather than declared.

Every option's value is checked in one place (`setting.resolve`) the same way for every scene. Whether a
scene *uses* an option is read off its plans: the plans are computed from a `Setting` that records which
of its fields they read (`focus`, `head` — the head and its layer —, `layout`, `axes`). An option the user
gave that no plan read does not apply to that scene, and the command line says so.
"""

from __future__ import annotations

import logging
import sys
from dataclasses import fields

from .setting import Setting

class _PlainStderr(logging.StreamHandler):
    """One plain line on whatever sys.stderr is now (not manim's formatted log)."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, _):
        pass


log = logging.getLogger("attention_manim")
if not log.handlers:
    _handler = _PlainStderr()
    _handler.setFormatter(logging.Formatter("%(message)s"))
    log.addHandler(_handler)
    log.propagate = False

# the Setting field each tracked command-line option lands in; a lesson option (`SceneInputs.options`,
# read with `Setting.option(name)`) is tracked as "option:<name>" (`--devices` is read as `Setting.devices`)
OPTION_FIELDS = {"--focus": "focus", "--head": "head", "--layer": "head", "--layout": "layout", "--axes": "axes",
                 "--devices": "devices", "--window": "option:window"}
TRACKED = ("focus", "head", "layout", "axes", "devices")
# the command-line options that land in SceneInputs.options, by their key there
LESSON_OPTIONS = {"window": "--window", "devices": "--devices"}


class _ReadRecorder(Setting):
    """A Setting that notes which tracked fields are read, except by `dataclasses` itself
    (`replace` reads every field to copy it; copies record into the same set)."""

    def __getattribute__(self, name):
        if name in TRACKED:
            caller = sys._getframe(1).f_globals.get("__name__")
            if caller != "dataclasses":
                object.__getattribute__(self, "_reads").add(name)
        return object.__getattribute__(self, name)

    def option(self, name: str, default=None):
        object.__getattribute__(self, "_reads").add(f"option:{name}")
        return Setting.option(self, name, default)


def recording(setting: Setting, reads: set[str]) -> Setting:
    """`setting` as a Setting that adds the tracked fields its readers read to `reads`."""

    class Recorder(_ReadRecorder):
        _reads = reads

    return Recorder(**{f.name: getattr(setting, f.name) for f in fields(setting)})


def fields_read(lesson, setting: Setting) -> set[str]:
    """The tracked Setting fields that `lesson`'s plans read."""
    reads: set[str] = set()
    lesson.plans(recording(setting, reads))
    return reads


def plan_lesson(lesson, inputs) -> tuple[Setting, list, list[str]]:
    """The lesson's setting and plans (computed once), and the options the user gave that no plan read;
    each of those is said on stderr (a warning of the `attention_manim` logger) so the user knows."""
    setting = lesson.setting(inputs)
    reads: set[str] = set()
    plans = lesson.plans(recording(setting, reads))
    unused = [opt for opt in given_options(inputs) if OPTION_FIELDS[opt] not in reads]
    for opt in unused:
        log.warning("note: %s does not apply to %s; it was ignored", opt, lesson.name)
    return setting, plans, unused


def given_options(inputs) -> list[str]:
    """The tracked options the user set (values other than the defaults)."""
    given = []
    if inputs.focus is not None:
        given.append("--focus")
    if inputs.head is not None:
        given.append("--head")
    if inputs.layer is not None:
        given.append("--layer")
    if inputs.layout != "video":
        given.append("--layout")
    if inputs.axes is not None:
        given.append("--axes")
    for name, flag in LESSON_OPTIONS.items():
        if (inputs.options or {}).get(name) is not None:
            given.append(flag)
    return given


def unused_options(lesson, inputs) -> list[str]:
    """The options the user gave that `lesson` does not use (after checking every value: a bad value
    is a UserError whatever the scene)."""
    setting = lesson.setting(inputs)
    given = given_options(inputs)
    if not given:
        return []
    reads = fields_read(lesson, setting)
    return [opt for opt in given if OPTION_FIELDS[opt] not in reads]
