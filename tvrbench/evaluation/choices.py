"""The evaluation's named choices, declared once: the engine checks its arguments against them, the
settings files are typed by them, and the command line lists them without loading the kernels."""

from __future__ import annotations

from typing import Literal, get_args

TieRule = Literal["stable", "optimistic", "pessimistic", "average"]
ApVariant = Literal["standard", "fire"]
NdcgVariant = Literal["epic", "paper", "full"]
FusionPolicy = Literal["judged", "relevant", "none"]

TIE_RULES: tuple[str, ...] = get_args(TieRule)
AP_VARIANTS: tuple[str, ...] = get_args(ApVariant)
NDCG_VARIANTS: tuple[str, ...] = get_args(NdcgVariant)
FUSION_POLICIES: tuple[str, ...] = get_args(FusionPolicy)


def listed(choices: tuple[str, ...], separator: str = " | ") -> str:
    """``a | b | c``: the choices as a command's help lists them, the first being the default."""
    return separator.join(choices)
