#!/usr/bin/env python
"""`python render.py ...` in a checkout: the same command line as `attention-manim ...` and
`python -m attention_manim ...` (attention_manim/cli.py). Nothing imports this file."""

from attention_manim.cli import main

if __name__ == "__main__":
    main()
