"""The blind labelling widget for JupyterLab (anywidget: its front end ships in this package).

A thin host for a :class:`~judgekit.labels.session.LabellingSession`: the page receives only the
session's blind state (positions, texts, scale) and sends labels back, which the session writes to
``labels.csv`` at once. Keys: a digit scores; on a scale past 9 the digits show in a "Typed:"
buffer and Enter saves them (Backspace corrects, Esc clears), ``s`` skips, ``a`` abstains (where
the rubric allows it), ``←``/``→`` (or ``p``/``n``) move, ``Esc`` leaves the note field. The widget
takes the keyboard focus when shown and says so when it loses it; while it has the focus no key
reaches JupyterLab. The same front end serves the page of ``judgekit label``
(:mod:`judgekit.labels.page`).
"""

from __future__ import annotations

from typing import Any

import anywidget
import traitlets

from judgekit.labels.session import FRONT_END, STYLE, LabellingSession


class LabelWidget(anywidget.AnyWidget):
    """Label a session's items blind, one at a time, with the keyboard.

    Args:
        session: What is labelled, by whom, into which file
            (:class:`~judgekit.labels.session.LabellingSession`, as ``judgekit label``'s page
            is given); the widget shows its blind state and hands it every label.
    """

    _esm = FRONT_END
    _css = STYLE

    items: traitlets.List[dict[str, Any]] = traitlets.List().tag(sync=True)
    scale: traitlets.List[dict[str, Any]] = traitlets.List().tag(sync=True)
    abstain = traitlets.Bool(False).tag(sync=True)
    position = traitlets.Int(0).tag(sync=True)
    labelled = traitlets.Dict().tag(sync=True)
    labeller = traitlets.Unicode("").tag(sync=True)
    rubric_name = traitlets.Unicode("").tag(sync=True)
    error = traitlets.Unicode("").tag(sync=True)

    def __init__(self, session: LabellingSession) -> None:
        self.session = session
        super().__init__(position=self.session.resume_position(), **self.session.state())
        self.on_msg(self._on_message)

    def _on_message(self, _widget: Any, content: dict[str, Any], _buffers: Any) -> None:
        if content.get("kind") != "label":
            return
        try:
            self.record(
                int(content["position"]),
                str(content["status"]),
                content.get("score"),
                str(content.get("note", "")),
                advance=bool(content.get("advance", True)),
            )
        except (OSError, ValueError) as problem:
            self.error = f"label not saved: {problem}"

    def record(
        self,
        position: int,
        status: str,
        score: float | None,
        note: str = "",
        *,
        advance: bool = True,
    ) -> None:
        """Store one label (file first, then the page) and, unless told not to, move on."""
        self.session.record(position, status, score, note)
        self.labelled = self.session.state()["labelled"]
        self.error = ""
        if advance:
            self.position = min(position + 1, len(self.items) - 1)


class LabellingPause(Exception):
    """Raised right after the widget in a notebook, so that "Run all" stops before the analysis.

    IPython shows its one line instead of a traceback.
    """

    def _render_traceback_(self) -> list[str]:
        return [str(self)]
