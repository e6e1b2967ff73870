"""``judgekit report --html``: the executed report as one static page that needs no Jupyter.

The page (``report/report.html``) holds the study's settings (``study.json``), the
combinations of rubric, variant, judge and run each notebook covers (``steps.json``), the
verification status (``report/verification.json`` when ``judgekit verify`` wrote one, else
"not verified"), which notebooks were skipped and why, and every executed notebook's text,
tables and figures, converted by nbconvert's ``basic`` template without the code. It is
self-contained: the figures are inline PNGs, the style is inline, and nothing is loaded from
the network (no script at all).

Only the notebooks of ``steps.json`` that ran are shown (a stray or stale ``.ipynb`` in
``report/`` is not), and their HTML is sanitised with bleach (:func:`sanitise`): no
``<script>``, no ``on*=`` handler, no ``javascript:`` URL, images only as inline PNG, JPEG or
GIF. Steps that failed or did not run are listed. Wide tables scroll inside their own box and
long values wrap, so the page reads at 1280 px.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgekit.data.atomic import atomic_write_text
from judgekit.study.folder import StudyFolder
from judgekit.types import UsageError

#: Written by ``judgekit verify --html`` and read here: the outcome of the last verification.
VERIFICATION = "verification.json"
#: Written by ``judgekit report``: each notebook's parameters, or why it was skipped.
REPORT_STEPS = "steps.json"

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem;
       line-height: 1.45; color: #222; overflow-wrap: anywhere; }
h1, h2 { border-bottom: 1px solid #ddd; padding-bottom: .2rem; }
table { border-collapse: collapse; margin: .6rem 0; font-size: .9rem; display: block;
        max-width: 100%; overflow-x: auto; }
th, td { border: 1px solid #ccc; padding: .2rem .5rem; text-align: right; vertical-align: top; }
th { background: #f3f3f3; }
table.settings th, table.settings td { text-align: left; }
table.settings th { white-space: nowrap; overflow-wrap: normal; }
img { max-width: 100%; height: auto; }
pre { background: #f7f7f7; padding: .5rem; overflow-x: auto; font-size: .85rem;
      white-space: pre-wrap; overflow-wrap: anywhere; }
section, div { max-width: 100%; }
.status-ok { color: #1a7f37; font-weight: bold; }
.status-bad { color: #b42318; font-weight: bold; }
.status-none { color: #8a6d00; font-weight: bold; }
.anchor-link { display: none; }
"""
#: What a notebook's HTML may keep (bleach's allow-list): text, tables, lists, inline images.
_TAG_NAMES = (
    "a abbr b blockquote br caption code col colgroup dd del details div dl dt em figcaption "
    "figure h1 h2 h3 h4 h5 h6 hr i img ins kbd li ol p pre q s samp small span strong sub "
    "summary sup table tbody td tfoot th thead tr u ul var"
)
ALLOWED_TAGS = frozenset(_TAG_NAMES.split())
_DROPPED_WITH_CONTENT = re.compile(
    r"<(script|style|iframe|object|embed|template|noscript|svg|math)\b.*?</\1\s*>|"
    r"<(script|style|iframe|object|embed|template|noscript)\b[^>]*/?>",
    re.IGNORECASE | re.DOTALL,
)
_IMAGE_DATA = re.compile(r"data:image/(png|jpeg|gif);base64,[A-Za-z0-9+/=\s]*\Z")


def _attribute_allowed(tag: str, name: str, value: str) -> bool:
    if name in ("class", "id", "title", "colspan", "rowspan", "align"):
        return True
    if tag == "img" and name in ("alt", "width", "height"):
        return True
    if tag == "img" and name == "src":
        return bool(_IMAGE_DATA.match(value))
    if tag == "a" and name == "href":
        return value.startswith("#") or value.lower().startswith(("https://", "http://"))
    return False


def sanitise(fragment: str) -> str:
    """A notebook's HTML with nothing that can run: no script, handler or ``javascript:``.

    Scripts, styles and embedded documents go with their content; every other tag and
    attribute not allowed (:data:`ALLOWED_TAGS`, :func:`_attribute_allowed`) goes, its text kept.

    >>> sanitise('<p onclick="x()">hi<script>alert(1)</script></p><a href="javascript:x">a</a>')
    '<p>hi</p><a>a</a>'
    """
    import bleach

    kept = _DROPPED_WITH_CONTENT.sub("", fragment)
    return str(
        bleach.clean(
            kept,
            tags=ALLOWED_TAGS,
            attributes=_attribute_allowed,
            protocols={"http", "https", "data"},
            strip=True,
            strip_comments=True,
        )
    )


@dataclass(frozen=True)
class StepOutcome:
    """What became of one step of ``steps.json``: ``ran``, ``skipped``, ``failed`` or ``not run``.

    Attributes:
        notebook: The run name (``05_distributions_and_bias``).
        state: One of ``ran``, ``skipped``, ``failed``, ``not run``.
        why: The skip's reason, or which file says it failed.
    """

    notebook: str
    state: str
    why: str = ""

    def line(self) -> str:
        """One line for a person: ``05_x failed (report/05_x.failed.ipynb)``."""
        return f"{self.notebook} {self.state}" + (f" ({self.why})" if self.why else "")


def read_steps(report: Path) -> list[dict[str, Any]]:
    """The report's ``steps.json`` (``[]`` when there is none or it is not a list of steps).

    Raises:
        UsageError: If the file is not JSON.
    """
    path = report / REPORT_STEPS
    if not path.is_file():
        return []
    try:
        steps = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise UsageError(f"{path}: not the JSON list `judgekit report` writes ({error})") from None
    if not isinstance(steps, list):
        return []
    return [s for s in steps if isinstance(s, dict) and isinstance(s.get("notebook"), str)]


def step_outcomes(report: Path) -> list[StepOutcome]:
    """Each step of ``report/steps.json`` and what its files say became of it.

    A step ran when ``<notebook>.ipynb`` is there (each execution first removes both of its
    earlier files, :func:`judgekit.reporting.notebooks.execute`), failed when
    ``<notebook>.failed.ipynb`` is, and did not run when neither is.
    """
    outcomes = []
    for step in read_steps(report):
        name = str(step["notebook"])
        if step.get("skipped"):
            outcomes.append(StepOutcome(name, "skipped", str(step["skipped"])))
        elif (report / f"{name}.failed.ipynb").is_file():
            outcomes.append(StepOutcome(name, "failed", f"report/{name}.failed.ipynb"))
        elif (report / f"{name}.ipynb").is_file():
            outcomes.append(StepOutcome(name, "ran"))
        else:
            outcomes.append(StepOutcome(name, "not run", f"no report/{name}.ipynb"))
    return outcomes


def notebook_body(path: Path) -> str:
    """One executed notebook as HTML: its markdown, outputs, tables and figures, no code."""
    import nbformat
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(
        template_name="basic",
        exclude_input=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
    )
    body, _ = exporter.from_notebook_node(nbformat.read(path, as_version=4))
    return sanitise(str(body))


def _settings_table(settings: Mapping[str, Any]) -> str:
    rows = []
    for key, value in settings.items():
        shown = value if isinstance(value, str | int | float) else json.dumps(value, indent=1)
        cell = (
            f"<pre>{html.escape(str(shown))}</pre>"
            if "\n" in str(shown)
            else html.escape(str(shown))
        )
        rows.append(f"<tr><th>{html.escape(str(key))}</th><td>{cell}</td></tr>")
    return '<table class="settings">' + "".join(rows) + "</table>"


def _verification_section(verification: Mapping[str, Any] | None) -> str:
    if verification is None:
        return (
            '<p class="status-none">Not verified: run <code>judgekit export</code>, then '
            "<code>judgekit verify BUNDLE --html FILE</code> on another machine.</p>"
        )
    lines = "".join(f"<li>{html.escape(str(c))}</li>" for c in verification.get("checked", []))
    if verification.get("ok"):
        head = '<p class="status-ok">Verified: every check passed.</p>'
    else:
        problems = "".join(f"<li>{html.escape(str(p))}</li>" for p in verification["problems"])
        head = f'<p class="status-bad">Verification failed:</p><ul>{problems}</ul>'
    changes = verification.get("library_changes") or []
    libraries = (
        "<p>Library versions that differ from the exporting machine's: "
        + html.escape("; ".join(changes))
        + "</p>"
        if changes
        else ""
    )
    proves = (
        "<p>The manifest's checksums catch accidents, not forgery: it is not a signature. "
        "The judgments and tables above were recomputed from the stored replies by the "
        "verifier's own judgekit; none of the bundle's code or notebooks ran.</p>"
    )
    return f"{head}<p>Checked:</p><ul>{lines}</ul>{libraries}{proves}"


def _not_run_section(outcomes: Sequence[StepOutcome]) -> str:
    """The steps that failed or did not run (first, in red), then those skipped and why."""
    bad = [o for o in outcomes if o.state in ("failed", "not run")]
    skipped = [o for o in outcomes if o.state == "skipped"]
    if not bad and not skipped:
        return ""
    failed = "".join(
        f"<li><code>{html.escape(o.notebook)}</code> {html.escape(o.state)}: "
        f"{html.escape(o.why)}</li>"
        for o in bad
    )
    head = f'<p class="status-bad">Failed or did not run:</p><ul>{failed}</ul>' if bad else ""
    items = "".join(
        f"<li><code>{html.escape(o.notebook)}</code>: {html.escape(o.why)}</li>" for o in skipped
    )
    return f"<h2>Not run</h2>{head}" + (f"<p>Skipped:</p><ul>{items}</ul>" if skipped else "")


def _covers_section(step: Mapping[str, Any] | None) -> str:
    """What one notebook's tables and figures were computed for (``steps.json``'s ``covers``)."""
    covers: Sequence[Mapping[str, Any]] = (step or {}).get("covers") or []
    if not covers:
        return ""
    keys = list(dict.fromkeys(k for entry in covers for k in entry))
    head = "".join(f"<th>{html.escape(k)}</th>" for k in keys)

    def cell(value: Any) -> str:
        shown = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
        return f"<td>{html.escape(shown)}</td>"

    rows = "".join(
        "<tr>" + "".join(cell(entry.get(k, "")) for k in keys) + "</tr>" for entry in covers
    )
    return (
        f"<p>Computed for {len(covers)} combination(s) of what was judged; every table and "
        f"figure below has a row or panel per combination:</p>"
        f"<table><tr>{head}</tr>{rows}</table>"
    )


def write_html_report(study_dir: str | Path, target: Path | None = None) -> Path:
    """Write the study's report as one self-contained HTML page; return its path.

    Args:
        study_dir: A study folder whose ``report/`` was executed by ``judgekit report``.
        target: Where to write it (default ``report/report.html`` in the study).
    """
    folder = StudyFolder(Path(study_dir))
    report = folder.report
    settings = (
        json.loads(folder.manifest.read_text(encoding="utf-8")) if folder.manifest.is_file() else {}
    )
    status_file = report / VERIFICATION
    verification = (
        json.loads(status_file.read_text(encoding="utf-8")) if status_file.is_file() else None
    )
    steps = read_steps(report)
    outcomes = step_outcomes(report)
    notebooks = [report / f"{o.notebook}.ipynb" for o in outcomes if o.state == "ran"]
    title = f"judgekit report: {folder.root.resolve().name}"
    contents = "".join(
        f'<li><a href="#nb-{p.stem}">{html.escape(p.stem)}</a></li>' for p in notebooks
    )
    by_notebook = {str(s.get("notebook")): s for s in steps}
    sections = "".join(
        f'<section id="nb-{p.stem}"><h1>{html.escape(p.stem)}</h1>'
        f"{_covers_section(by_notebook.get(p.stem))}{notebook_body(p)}</section>"
        for p in notebooks
    )
    page = (
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>"
        f"<h1>{html.escape(title)}</h1>"
        f"<h2>Verification</h2>{_verification_section(verification)}"
        f"<h2>Study settings</h2>{_settings_table(settings)}"
        f"{_not_run_section(outcomes)}"
        f"<h2>Notebooks</h2><ul>{contents}</ul>{sections}</body></html>\n"
    )
    path = target or report / "report.html"
    try:
        atomic_write_text(path, page)
    except PermissionError:
        raise UsageError(f"{path}: cannot write the HTML report there (read-only?)") from None
    return path
