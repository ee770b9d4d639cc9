"""A key kept in a corner of the frame while chapters come and go (the stage's key to ␣).

It follows the camera: where the camera zooms, it keeps its corner of the frame and its size on
screen. It waits, unseen, while a close-up fills the frame or while something drawn takes its
corner, and comes back when the camera is home and the corner is free.
"""

from __future__ import annotations

from manim import DL, UR

LOOK_EVERY = 6  # frames between two looks at the corner (walking a big grid's cells on every frame cost
# a render a third of its time); `look()` asks for a look on the next frame (the end of an animation)
GAP = 0.08  # how near something drawn may come to the key before it counts as taking the corner


def corner_taken(scene, key, frame) -> bool:
    """Whether anything drawn (visible) in `scene` comes within GAP of `key`'s box."""
    x0, y0 = key.get_corner(DL)[:2] - GAP
    x1, y1 = key.get_corner(UR)[:2] + GAP

    def meets(m) -> bool:
        lo, hi = m.get_corner(DL), m.get_corner(UR)
        return lo[0] < x1 and hi[0] > x0 and lo[1] < y1 and hi[1] > y0

    for top in scene.mobjects:
        if top is key or top is frame or not top.family_members_with_points() or not meets(top):
            continue
        for part in top.family_members_with_points():
            if meets(part) and (part.get_fill_opacity() > 0.05 or part.get_stroke_opacity() > 0.05
                                and part.get_stroke_width() > 0):
                return True
    return False


def keep_in_corner(key, scene) -> None:
    """Make `key`, placed where it stands in the frame at home, stay there as the camera moves (above),
    and give it `look()`. A scene without a moving camera leaves it where it is."""
    frame = getattr(scene.camera, "frame", None)
    if frame is None:
        key.look = lambda: None
        return
    width0, offset, size0 = frame.width, key.get_center() - frame.get_center(), key.width
    seen = {"frames": 0, "taken": False}

    def follow(m):
        k = frame.width / width0
        m.scale(size0 * k / m.width)
        m.move_to(frame.get_center() + offset * k)
        if seen["frames"] % LOOK_EVERY == 0:
            seen["taken"] = corner_taken(scene, m, frame)
        seen["frames"] += 1
        m.set_opacity(1.0 if k > 0.98 and not seen["taken"] else 0.0)

    key.look = lambda: seen.update(frames=0)
    key.add_updater(follow)
