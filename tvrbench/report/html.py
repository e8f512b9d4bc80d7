"""``report.html``: one self-contained page with the results, the analyses, the plots, the per-query
viewer and the multiple-choice items.

Self-contained means no request leaves the page: styles and the script are inline, plots are
``data:`` URIs, and a Content-Security-Policy (``default-src 'none'``) makes the browser refuse any
fetch. Tables are plain HTML (readable without JavaScript); only the viewer needs the script.
"""

from __future__ import annotations

import base64
import difflib
import html
import json
import re
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path

from tvrbench.evaluation.fire.tables import signatures_in
from tvrbench.generators.audit import pair_reading, summary_cells
from tvrbench.io.atomic import atomic_write
from tvrbench.io.mc import MCInstance, infer_contrast_option
from tvrbench.lm.models import Preference
from tvrbench.mc.refine import refinement_line
from tvrbench.mc.score import mc_score_grid, scorer_column
from tvrbench.report.tables import is_mc_score, result_tables
from tvrbench.review.score import review_line
from tvrbench.signature import Signature

MC_SHOWN = 100  # items per split shown in the report; the TSV has them all
IMAGE_TYPES = {".png": "image/png", ".svg": "image/svg+xml", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}


@dataclass
class MCItems:
    """One multiple-choice split as shown: instances and, when known, which option is the contrast."""

    instances: list[MCInstance]
    contrast_options: list[int | None] | None = None  # from the split's sidecar; else the rule `mc import` records
    plausibility: dict | None = None  # the sidecar's: how a language model reads its contrast set (lm/models.py)
    audit: dict | None = None  # the sidecar's: whether text alone gives its contrasts away (generators/audit.py)
    review: dict | None = None  # the sidecar's: what readers made of a sample of its contrasts (review)
    refinement: dict | None = None  # the sidecar's: what adversarial refinement kept, before and after (mc/refine.py)
    picks: dict[str, list[int]] = field(default_factory=dict)  # scorer -> each instance's chosen option (mc score's JSON)
    digest: str | None = None  # the split's input digest: an mc score's signature names its split by it
    audited: bool = False  # plausibility and audit are an mc audit's of this split's pairs, not the contrast file's

    def each_contrast_option(self) -> list[int | None]:
        """Each instance's contrast option: the sidecar's, else the rule ``mc import`` records."""
        return self.contrast_options if self.contrast_options is not None else [infer_contrast_option(i) for i in self.instances]

    @property
    def whose(self) -> str:
        """Whose pairs the figures above the items are: this split's (its mc audit), or the contrast file's,
        of which the split may hold only some (one caption per video)."""
        if self.audited:
            return "this split's contrasts"
        pairs = (self.plausibility or self.audit["lm_preference"])["pairs"]
        here = sum(option is not None for option in self.each_contrast_option())
        return "its contrast set" if pairs == here else f"its contrast set ({pairs:,} pairs; this split holds {here:,} of them)"


@dataclass
class ReportContent:
    title: str = "tvrbench report"
    subtitle: str = ""
    results: dict[str, dict] = field(default_factory=dict)  # name -> evaluate JSON or {"models": {...}}
    analyses: dict[str, object] = field(default_factory=dict)  # name -> any JSON (tables where it is tabular)
    plots: list[Path] = field(default_factory=list)
    viewer: dict | None = None  # from tvrbench.report.viewer.viewer_payload
    mc: dict[str, MCItems] = field(default_factory=dict)


def _e(value) -> str:
    return html.escape(str(value), quote=True)


def _cell(value, numeric: bool) -> str:
    """One table cell: numbers right-aligned with thousands separators, signatures small, the rest as text."""
    if numeric and isinstance(value, (int, float)) and not isinstance(value, bool):
        text = f"{value:,}" if isinstance(value, int) else f"{value:.4f}" if abs(value) < 1000 else f"{value:,.1f}"
        return f'<td class="num">{text}</td>'
    if isinstance(value, str) and value.startswith("tvrbench:"):
        return f'<td class="signature">{_e(value)}</td>'
    return f"<td>{_e('' if value is None else value)}</td>"


def _table(header: list[str], rows: list[list], numeric_from: int = 1, css: str = "") -> str:
    """An HTML table; columns from ``numeric_from`` on are formatted as numbers where they hold numbers."""
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(_cell(value, i >= numeric_from) for i, value in enumerate(row)) + "</tr>" for row in rows)
    return f'<table class="{css}"><tr>{head}</tr>{body}</table>'


def results_models(results: dict, name: str = "model") -> dict[str, dict]:
    """``{model: evaluate JSON}`` from either results layout (a single evaluation is called ``name``)."""
    if isinstance(results.get("models"), dict):
        return results["models"]
    return {name: results}


def results_section(name: str, results: dict) -> str:
    """Each model's evaluation as ``tvrbench evaluate`` prints it (its tables, rebuilt from its JSON)."""
    models = results_models(results, name)
    shown = []
    for model, result in models.items():
        tables = result_tables(result)
        if tables is None:  # an edited file: its JSON as it is
            shown.append(f"<h4>{_e(model)}</h4>{json_block(result)}")
        else:
            shown += [paper_table(replace(table, title=f"{model}: {table.title}")) for table in tables]
    signatures = "".join(f'<p class="signature">{_e(model)}: {_e(result.get("signature", ""))}</p>' for model, result in models.items())
    return f"<h3>{_e(name)}</h3>{''.join(shown)}<details><summary>signatures</summary>{signatures}</details>"


def _scalar(value) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def json_block(value, depth: int = 0) -> str:
    """JSON as tables: a list of flat objects or an object of objects is one table (a row each); an
    object's scalar fields form a key / value table; nested parts follow under their keys."""
    if isinstance(value, list) and value and all(isinstance(item, dict) and all(map(_scalar, item.values())) for item in value):
        header = list(dict.fromkeys(key for item in value for key in item))
        return _table(header, [[item.get(key) for key in header] for item in value], numeric_from=0)
    if isinstance(value, list) and all(map(_scalar, value)):
        text = json.dumps(value, ensure_ascii=False)
        shown = text if len(text) <= 2000 else text[:2000] + " …"
        return f"<details><summary>{len(value):,} values</summary><pre>{_e(shown)}</pre></details>"
    if not isinstance(value, dict) or not value or depth > 3:
        return f"<pre>{_e(json.dumps(value, indent=1, ensure_ascii=False)[:20000])}</pre>"
    if all(isinstance(item, dict) for item in value.values()):
        header = list(dict.fromkeys(key for item in value.values() for key, field in item.items() if _scalar(field)))
        table = _table(["", *header], [[name, *(item.get(key) for key in header)] for name, item in value.items()]) if header else ""
        nested = {f"{name} › {key}": field for name, item in value.items() for key, field in item.items() if not _scalar(field)}
    else:
        scalars = [[key, item] for key, item in value.items() if _scalar(item) and not _is_signature(item)]
        # a signature under the table, not in it: its width would push the values to the far right
        table = (_table(["", "value"], scalars) if scalars else "") + "".join(
            f'<p class="signature">{_e(key)}: {_e(item)}</p>' for key, item in value.items() if _is_signature(item)
        )
        nested = {key: item for key, item in value.items() if not _scalar(item)}
    return table + "".join(f"<h4>{_e(key)}</h4>{json_block(item, depth + 1)}" for key, item in nested.items())


def _is_signature(value) -> bool:
    return isinstance(value, str) and value.startswith("tvrbench:")


def analysis_section(name: str, value) -> str:
    """A result's JSON as its tables (those the command line printed: named columns, the CLI's cells),
    titled by what it is, in words; any other JSON as :func:`json_block` under its name."""
    tables = result_tables(value)
    if tables is None:
        return f"<h3>{_e(name)}</h3>{json_block(value)}"
    first, *rest = tables
    return f"<h3>{_e(first.title)}</h3>{paper_table(first, caption=False)}{''.join(map(paper_table, rest))}{_signatures({name: value})}"


def _signatures(values: dict[str, object]) -> str:
    """The signatures in each named JSON, folded away, each under the name its file was given."""
    shown = "".join(f'<p class="signature">{_e(name)}: {_e(text)}</p>' for name, value in values.items() for text in signatures_in(value))
    return f"<details><summary>signatures</summary>{shown}</details>"


def mc_scores_section(scores: dict[str, dict], splits: dict[str, str]) -> str:
    """Every ``mc score`` JSON in one table, split × scorer (:func:`~tvrbench.mc.score.mc_score_grid`):
    a split is named as ``--mc`` named it (``splits``: digest → name), a built-in scorer by what it is, and
    a model's scores (or a second run of one scorer on a split) by the name its file was given."""
    order = list(splits.values())
    triples = []
    for name, value in scores.items():
        digest = Signature.parse(value["signature"]).fields["mc"]
        split, column = splits.get(digest, f"split mc:{digest}"), scorer_column(value)
        taken = any(split == other and column == given for other, given, _ in triples)
        triples.append((split, name if column is None or taken else column, value))
    triples.sort(key=lambda triple: order.index(triple[0]) if triple[0] in order else len(order))  # as --mc named them
    return "".join(map(paper_table, mc_score_grid(triples))) + _signatures(scores)


def paper_table(table, caption: bool = True) -> str:
    """A :class:`~tvrbench.results.Table` as the command line prints it: title (unless a heading above
    says it), named columns, the first column left-aligned and the others right-aligned, its notes under it."""
    notes = "".join(f'<p class="note">{_e(note)}</p>' for note in table.notes)
    title = f"<caption>{_e(table.title)}</caption>" if caption else ""
    if not table.columns:  # notes alone: prose
        return (f"<h4>{_e(table.title)}</h4>" if caption else "") + notes
    head = "".join(f"<th>{_e(column)}</th>" for column in table.columns)
    body = "".join(
        "<tr>" + "".join(f'<td class="num">{_e(cell)}</td>' if number else f"<td>{_e(cell)}</td>" for number, cell in enumerate(row)) + "</tr>"
        for row in table.rows
    )
    return f'<table class="analysis">{title}<tr>{head}</tr>{body}</table>{notes}'


def plot_figure(path: Path) -> str:
    mime = IMAGE_TYPES.get(path.suffix.lower())
    if mime is None:
        raise ValueError(f"{path}: not an image type the report embeds ({', '.join(IMAGE_TYPES)})")
    encoded = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<figure><img alt="{_e(path.stem)}" src="data:{mime};base64,{encoded}"><figcaption>{_e(path.name)}</figcaption></figure>'


def highlight_edit(positive: str, contrast: str) -> str:
    """The contrast text with the words that differ from the positive in ``<mark>``."""
    a, b = positive.split(), contrast.split()
    pieces = []
    for tag, _, _, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        words = _e(" ".join(b[j1:j2]))
        if words:
            pieces.append(words if tag == "equal" else f"<mark>{words}</mark>")
    return " ".join(pieces)


def plausibility_note(saved: dict, whose: str) -> str:
    """One line on how a language model reads the contrasts (``whose``) beside their originals."""
    preference = Preference(saved.get("lm"), saved.get("pairs") or 0, saved.get("prefers_original"), saved.get("median_gap_nats_per_token"))
    return (
        f'<p class="note">{_e(whose.capitalize())}: {_e(preference)} (language model {_e(preference.lm)}). About half means '
        "the contrasts read as fluently as real captions, so fluency alone does not give them away.</p>"
    )


def audit_note(saved: dict, whose: str) -> str:
    """Whether text alone tells the contrasts (``whose``) from their originals: the figures, then what they say."""
    figures = "; ".join(f"{name} {value}" for name, value in summary_cells(saved).items())
    reading = " ".join(pair_reading(saved))
    return f'<p class="note">Text-only audit of {_e(whose)}: {_e(figures)}. {_e(reading)} (<code>tvrbench mc audit</code>)</p>'


def review_note(saved: dict) -> str:
    """What readers made of the split's contrasts, beside the machine figures."""
    return f'<p class="note">Blind review of its contrast set: {_e(review_line(saved))} (<code>tvrbench contrast review-score</code>)</p>'


def refinement_note(saved: dict) -> str:
    """What adversarial refinement kept, and each scorer before and after."""
    return f'<p class="note">{_e(refinement_line(saved))} (<code>tvrbench contrast refine</code>, <code>mc build --refine</code>)</p>'


def _pick_cell(pick: int, label: int, contrast: int | None) -> str:
    """A scorer's choice, coloured as the option it chose: the positive, the contrast or another negative."""
    if pick == label:
        return f'<td class="mc-positive">{pick}: positive</td>'
    if pick == contrast:
        return f'<td class="mc-contrast">{pick}: contrast</td>'
    return f"<td>{pick}: other</td>"


def mc_section(name: str, items: MCItems) -> str:
    shown = items.instances[:MC_SHOWN]
    header = "".join(f"<th>option {i}</th>" for i in range(len(shown[0].endings))) if shown else ""
    header += "".join(f"<th>{_e(scorer)} picks</th>" for scorer in items.picks)
    rows = []
    for number, (instance, contrast) in enumerate(zip(shown, items.each_contrast_option())):
        cells = []
        for option, text in enumerate(instance.endings):
            if option == instance.label:
                cells.append(f'<td class="mc-positive" title="positive">{_e(text)}</td>')
            elif option == contrast:
                cells.append(f'<td class="mc-contrast" title="contrast">{highlight_edit(instance.positive, text)}</td>')
            else:
                cells.append(f"<td>{_e(text)}</td>")
        cells += [_pick_cell(picks[number], instance.label, contrast) for picks in items.picks.values()]
        rows.append(f"<tr><td>{_e(instance.clip)}</td>{''.join(cells)}</tr>")
    more = f" (first {MC_SHOWN} shown)" if len(items.instances) > MC_SHOWN else ""
    note = "".join(render(saved, items.whose) for render, saved in ((plausibility_note, items.plausibility), (audit_note, items.audit)) if saved)
    note += review_note(items.review) if items.review else ""
    note += refinement_note(items.refinement) if items.refinement else ""
    return f'<h3>{_e(name)}: {len(items.instances):,} items{more}</h3>{note}<table class="mc"><tr><th>clip</th>{header}</tr>{"".join(rows)}</table>'


VIEWER_HTML = """<p class="note">Pick a query: each model's top {k} videos with the original relevance (the query's own video),
the FIRE label and the graded relevance side by side (FIRE paper, Figure 5).</p>
<div id="viewer-controls"><label>filter <input id="query-filter" type="search" placeholder="caption id or words"></label>
<label>query <select id="query-select"></select></label></div>
<p id="query-summary"></p><div id="viewer-models"></div>"""


def render_report(content: ReportContent) -> str:
    """The whole page as a string."""
    sections = []
    scores = {name: value for name, value in content.analyses.items() if is_mc_score(value)}
    analyses = {name: value for name, value in content.analyses.items() if name not in scores}
    if content.results:
        sections.append(("results", "Results", "".join(results_section(name, r) for name, r in content.results.items())))
    if analyses:
        sections.append(("analyses", "Analyses", "".join(analysis_section(name, value) for name, value in analyses.items())))
    if content.plots:
        sections.append(("plots", "Plots", '<div class="plots">' + "".join(plot_figure(Path(p)) for p in content.plots) + "</div>"))
    if content.viewer is not None:
        sections.append(("viewer", "Per-query viewer", VIEWER_HTML.format(k=content.viewer["k"])))
    if scores or content.mc:
        splits = {items.digest: name for name, items in content.mc.items() if items.digest}
        items = "".join(mc_section(n, i) for n, i in content.mc.items())
        legend = '<p class="note">Green: the positive; yellow: the contrast negative, its edit marked.</p>' if content.mc else ""
        sections.append(("mc", "Multiple choice", (mc_scores_section(scores, splits) if scores else "") + legend + items))
    body = "\n".join(f'<section id="{key}"><h2>{_e(title)}</h2>{inner}</section>' for key, title, inner in sections)
    nav = "".join(f'<a href="#{key}">{_e(title)}</a>' for key, title, _ in sections)
    data = json.dumps(content.viewer, ensure_ascii=False, allow_nan=False, separators=(",", ":")).replace("<", "\\u003c")
    template = resources.files("tvrbench.report").joinpath("template.html").read_text(encoding="utf-8")
    # One pass over the template: text put in (a title, a caption) is never scanned for placeholders.
    values = {"TITLE": _e(content.title), "SUBTITLE": _e(content.subtitle), "NAV": nav, "BODY": body, "DATA": data}
    return re.sub(r"\{\{(TITLE|SUBTITLE|NAV|BODY|DATA)\}\}", lambda match: values[match.group(1)], template)


def write_report(path: str | Path, content: ReportContent) -> Path:
    """Write the page atomically."""
    with atomic_write(path) as out:
        out.write(render_report(content))
    return Path(path)
