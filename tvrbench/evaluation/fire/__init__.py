"""FIRE (Rodriguez et al.): relevance labels, the paper's validity analyses and the annotation loop.

One module per analysis, each a function over plain arrays or the engine's results:
``agreement`` (Table 2), ``compare`` (Table 1), ``overlap`` (Table 3), ``pooling`` (Table 4),
``bootstrap`` (§4.3, Fig. 4, paired test), ``length`` (Figs. 2, 3), ``train_overlap`` (App. D),
``ranks`` (App. G), ``queue`` (annotating a new model's top k), ``labels`` (FIRE ⇄ TREC qrels),
``plots`` (the figures) and ``config`` (defaults, ``configs/fire.yaml``).
"""
