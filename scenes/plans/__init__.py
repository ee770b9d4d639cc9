"""Plans: what each chapter will show, as plain data computed from a `Setting` (no manim here).

A plan names the cells, the numbers (as rounded on screen) and the words a chapter's captions will
name. Tests read plans to check a chapter against the trace without rendering anything.
"""
