"""``report.html``: results, analyses (FIRE ones as the paper's tables), plots, the per-query viewer and
MC items in one offline page.

>>> from tvrbench.report import ReportContent, viewer_payload, write_report
>>> write_report("report.html", ReportContent(results={"run": json.load(open("results.json"))},
...              viewer=viewer_payload(captions, video_ids, {"model": scores}, judgments, relevance)))
"""

from tvrbench.report.html import MCItems, ReportContent, render_report, write_report
from tvrbench.report.viewer import viewer_payload

__all__ = ["MCItems", "ReportContent", "render_report", "viewer_payload", "write_report"]
