"""Semantic-similarity proxies (Wray et al., CVPR 2021): graded relevance from caption similarity.

>>> from tvrbench.proxies import parse_captions, proxy_matrix
>>> parsed = parse_captions(texts)          # spaCy runs once per distinct text (cached on disk)
>>> M = proxy_matrix(parsed, "bow")         # "pos", "syn", "met", "embedding"; float32 (n, n)

Proxies: ``bow`` (IoU of non-stop words), ``pos`` (Σ_p α_p IoU of the words tagged p, P = VERB, NOUN),
``syn`` (the same on WordNet synsets picked by Lesk), ``met`` (NLTK's METEOR, row caption = reference),
``embedding`` (sentence-embedding cosine) and ``visual`` (video-feature cosine).

Levels: ``caption`` gives captions x captions with ``M[i, i] = 1``; ``video`` gives videos x captions
with S(video i, caption j) = 1 when caption j belongs to video i, else the proxy between the video
(its words present in >= 25% of its captions; for METEOR the match kernel
½[mean_x k(x, y) + max_x k(x, y)] over its captions x) and caption j.

Files: ``M.npy`` (dense, float32 unless asked otherwise), ``M.zarr`` (dense, a chunked Zarr store),
``M.npz`` (a scipy.sparse CSR of the top k per row and/or the values above a threshold) or ``M.parquet``
(the same cells as a folder of Parquet files ``query_id, item_id, score``, one per block of rows;
:func:`open_relevance` reads every form back), and the sidecar ``M.json``, whose layout is stable (``format: 1``)::

    {"format": 1,
     "signature": "tvrbench:0.1.0|numpy:...|proxy:bow|level:caption|captions:1000:ab12...|...",
     "proxy": "bow", "level": "caption" | "video",
     "rows": "captions" | "videos", "columns": "captions",
     "shape": [n_rows, n_columns], "dtype": "float32",
     "storage": "dense" | "top-K per row (scipy.sparse CSR .npz)" | ...,   # what the file holds
     "row_ids": [...], "col_ids": [...],
     "col_videos": [...] | null}      # the video of each column caption, when known

``evaluate --relevance`` wants queries (captions) as rows: it transposes when ``rows`` is ``videos``.
"""

from tvrbench.io.relevance import open_relevance, read_proxy_cells
from tvrbench.proxies.config import ProxyConfig, load_config
from tvrbench.proxies.matrix import LEVELS, PROXIES, ProxyMatrix, build_proxy, proxy_matrix
from tvrbench.proxies.parsing import ParsedCaptions, parse_captions
from tvrbench.proxies.storage import write_proxy

__all__ = [
    "LEVELS",
    "PROXIES",
    "ParsedCaptions",
    "ProxyConfig",
    "ProxyMatrix",
    "build_proxy",
    "load_config",
    "parse_captions",
    "proxy_matrix",
    "open_relevance",
    "read_proxy_cells",
    "write_proxy",
]
