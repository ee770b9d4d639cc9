"""The attention formula, typeset with MathTypst (no LaTeX), every part addressable.

    f = AttentionFormula(theme=theme)                  # Attention(Q,K,V) = V softmax(KᵀQ/√d_k)
    self.play(Write(f)); self.play(f.part("Q").animate.scale(1.3))   # both Q's
    paper = AttentionFormula(form="paper")             # softmax(QKᵀ/√d_k) V, as in the paper

`form="video"` puts KᵀQ in the numerator: the video draws keys as rows and queries as columns,
so its grid is KᵀQ (softmax down each column), and with vectors as columns the values come first:
V softmax(KᵀQ/√d_k). `form="paper"` is the paper's softmax(QKᵀ/√d_k) V (queries as rows, softmax
along each row): the same numbers, the whole product transposed.

Parts (`part(name)`), all occurrences unless a side is named:
  Q, K, V            every occurrence; Q_lhs/K_lhs/V_lhs on the left, Q_rhs/K_rhs/V_rhs on the right
  attention, lhs     the word "Attention" / the whole left side Attention(Q, K, V)
  softmax            the word softmax
  KT                 Kᵀ (K and its transpose mark)
  scores             the numerator (KᵀQ or QKᵀ)
  sqrt, dk           √d_k and the d_k inside it
  fraction           scores / √d_k
  rhs                everything right of "="
"""

from __future__ import annotations

from manim import MathTypst, VGroup

from ..style import DARK, Theme

PARTS = ("Q", "K", "V", "Q_lhs", "K_lhs", "V_lhs", "Q_rhs", "K_rhs", "V_rhs", "attention", "lhs",
         "softmax", "KT", "scores", "sqrt", "dk", "fraction", "rhs")


def _sym(s: str, side: str) -> str:
    return f"{{{{ {{{{ {s} : {s}_{side} }}}} : {s} }}}}"


def formula_source(form: str = "video", lhs: bool = True) -> str:
    """The Typst math source with `{{ … : label }}` groups for every part."""
    kt = f"{{{{ {_sym('K', 'rhs')}^T : KT }}}}"
    q = _sym("Q", "rhs")
    if form == "video":
        scores = f"{kt} {q}"
    elif form == "paper":
        scores = f"{q} {kt}"
    else:
        raise ValueError(f"unknown form {form!r}: use 'video' (KᵀQ) or 'paper' (QKᵀ)")
    frac = f"{{{{ ({{{{ {scores} : scores }}}}) / ({{{{ sqrt({{{{ d_k : dk }}}}) : sqrt }}}}) : fraction }}}}"
    soft = f'{{{{ op("softmax") : softmax }}}} ( {frac} )'
    v = _sym("V", "rhs")
    # video: vectors are columns (V is d × n_keys, the weights n_keys × n_queries), so V comes first;
    # paper: vectors are rows, the weights n_queries × n_keys, so V comes last
    rhs = f"{{{{ {v} {soft} : rhs }}}}" if form == "video" else f"{{{{ {soft} {v} : rhs }}}}"
    if not lhs:
        return rhs
    left = (f'{{{{ {{{{ op("Attention") : attention }}}}({_sym("Q", "lhs")}, {_sym("K", "lhs")}, '
            f'{_sym("V", "lhs")}) : lhs }}}}')
    return f"{left} = {rhs}"


class AttentionFormula(MathTypst):
    """Attention(Q,K,V) = V softmax(KᵀQ/√d_k) (form="video") or softmax(QKᵀ/√d_k)V (form="paper").

    `colored=True` paints Q, K, V in the theme's query/key/value colours. `lhs=False` drops the
    "Attention(Q, K, V) =" part."""

    def __init__(self, form: str = "video", *, theme: Theme = DARK, font_size: float = 40,
                 colored: bool = True, lhs: bool = True, **kwargs):
        self.form = form
        self.theme = theme
        self.has_lhs = lhs
        super().__init__(formula_source(form, lhs), font_size=font_size, color=theme.text, **kwargs)
        if colored:
            self.color_parts()

    def part(self, name: str) -> VGroup:
        """The glyphs of one part (see the module doc for names)."""
        if name not in PARTS:
            raise KeyError(f"unknown part {name!r}; parts: {', '.join(PARTS)}")
        return self.select(name)

    def color_parts(self, theme: Theme | None = None):
        theme = theme or self.theme
        self.part("Q").set_color(theme.query)
        self.part("K").set_color(theme.key)  # Kᵀ's T follows: colour the whole KT group
        self.part("KT").set_color(theme.key)
        self.part("V").set_color(theme.value)
        return self


__all__ = ["AttentionFormula", "formula_source", "PARTS"]
