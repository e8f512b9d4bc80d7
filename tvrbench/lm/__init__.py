"""Language models: how plausible a caption reads.

* :mod:`~tvrbench.lm.models`: the :class:`~tvrbench.lm.models.LanguageModel` protocol, the n-gram
  and causal LMs, :func:`~tvrbench.lm.models.load_language_model` and how a model reads contrasts
  beside their originals (:func:`~tvrbench.lm.models.preference`);
* :mod:`~tvrbench.lm.offline`: the offline neural models shipped as packages (GGUF, converted once);
* :mod:`~tvrbench.lm.primer`: the captions of a collection a model reads before each of its captions;
* :mod:`~tvrbench.lm.loading`: loading pretrained weights (a causal LM, or T5) by hub name or path,
  and the pins that name them in signatures.

>>> from tvrbench.lm import load_language_model, mean_logprobs
>>> mean_logprobs(load_language_model("ngram"), ["a man is cooking"])
"""

from tvrbench.lazy import lazy_exports

# numpy loads with the first name used, not with the package.
__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "models": (
            "LanguageModel", "NGramLM", "CausalLM", "Preference", "SpanLogprobs",
            "load_language_model", "check_language_model", "mean_logprobs", "total_logprobs", "preference",
        ),
        "offline": ("AUTO", "OFFLINE_LMS", "REGISTRY", "OfflineLM"),
        "primer": ("Primers",),
    },
)  # fmt: skip
