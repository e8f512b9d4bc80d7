"""``report.html``: results and analyses (each result as the tables the command line printed, rebuilt
from its JSON: :mod:`tvrbench.report.tables`), plots, the per-query viewer and MC items in one offline page.

>>> from tvrbench.report import ReportContent, viewer_payload, write_report
>>> write_report("report.html", ReportContent(results={"run": json.load(open("results.json"))},
...              viewer=viewer_payload(captions, video_ids, {"model": scores}, judgments, relevance)))
"""

from tvrbench.lazy import lazy_exports

# The viewer ranks (numba, scipy): it loads with viewer_payload, not for a page of results alone.
__getattr__, __dir__, __all__ = lazy_exports(
    __name__, {"html": ("MCItems", "ReportContent", "render_report", "write_report"), "viewer": ("viewer_payload",)}
)
