"""Chapters: one step of the story each, `plan` (from scenes/plans, no manim) and `play` (manim)."""
