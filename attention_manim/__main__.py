"""`python -m attention_manim ...`: the command line of render.py."""

from attention_manim.cli import main

main()
