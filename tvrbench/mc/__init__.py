"""Hard-negative multiple-choice splits (Park et al. 2022, App. D; SPEC §5), built from contrast sets.

* :mod:`~tvrbench.mc.build`: a split from captions (Random MC) or from a contrast file (Gender, ID,
  Verb MC), optionally from reviewed contrasts only, or imported from a human-made TSV;
* :mod:`~tvrbench.mc.score`: scoring a split, by a model's scores or the text-only scorers;
* :mod:`~tvrbench.mc.audit`: whether text alone gives a split's contrasts away.

The TSV and its sidecar's contrast options are read and written by :mod:`tvrbench.io.mc`.

>>> from tvrbench.mc import build_mc_file, score_mc_file
>>> split = build_mc_file(captions, "gender", "gender.tsv", contrast_path="gender.jsonl")
>>> score_mc_file("gender.tsv", scorer="lm", lm="ngram").to_json()["accuracy"]
"""

from tvrbench.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "build": ("MC_KINDS", "MCSplit", "build_mc_file", "import_mc_file"),
        "score": ("SCORERS", "MCScore", "score_mc_file"),
        "audit": ("SplitAudit", "audit_split"),
    },
)
