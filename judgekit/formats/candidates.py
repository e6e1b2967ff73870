"""Every rating a single-item reply writes, and whether a careful reader takes it as the verdict.

A *candidate* is a label and a number (``Rating: [[2]]``, ``評価：[[1]]``, ``[RESULT] 3``,
``Score: 8/10``), a double-bracketed number (``[[7]]``), a line or a whole reply that is only a
number (``[4]``, ``7``), or a first-person rating phrase (``I would rate the response a 9 out
of 10``). Where it stands decides whether it is the verdict:

* alone on its line, closing a paragraph (``… is low. Rating: [[2]]``) or opening a line
  followed by a comment (``**Rating: [[2]]** - The response …``): taken;
* inside a sentence: taken only for the marker the rubric asked for when it is double-bracketed
  (``評価は[[7]]です。``, ``I would rate it [[6]].``), otherwise refused with that reason;
* a rating phrase: taken only when the reply has no other candidate.

Whatever its place, a candidate is not the judge's verdict when it is copied from the request
(the answer under judgment, the prompt's format example), stands next to "for example" or
"the format", rates something else (``the reference answer would get [[10]]``), or is
conditional or negated (``if …``, ``would have``, ``[[9]] or [[10]]``, ``not a [[5]]``). The reader
(:mod:`judgekit.formats.score_line`) decides from the list; every refusal names a candidate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from judgekit.formats.common import NUMBER_PATTERN
from judgekit.formats.reply import ReplyInput, normalise_line

#: Labels judges put before a score, in the languages of the measured replies.
LABELS = (
    r"final\s+score|overall\s+score|total\s+score|final\s+rating|overall\s+rating|final\s+grade"
    r"|score|rating|grade|\[result\]"
    r"|総合点|総合評価|最終スコア|最終評価|評価|評点|点数|得点|スコア"
    r"|最终得分|最终评分|总评分|总分|评分|評分|得分|分数|打分|评价"
    r"|최종\s*점수|총점|점수|평가"
    r"|gesamtbewertung|bewertung|punktzahl|note|évaluation|notation|puntuación|calificación"
    r"|valutazione|punteggio|voto|pontuação|avaliação|nota|ocena|punktacja|wynik"
    r"|итоговая\s+оценка|оценка|балл|điểm\s+số|điểm|đánh\s+giá|nilai|skor|penilaian"
    r"|pontszám|értékelés"
)
_ENGLISH_LABELS = {"score", "rating", "grade", "[result]"}
_NUM = rf"(?P<number>{NUMBER_PATTERN})"
_DEN = r"(?:[ \t]*(?:/|out[ \t]+of)[ \t]*(?P<den>\d+))?"
_VALUE = rf"(?P<open>\[\[|\[)?[ \t]*{_NUM}{_DEN}[ \t]*(?P<close>\]\]|\])?"
_SEP = r"(?P<sep>[:=：]|[ \t]+is|は|为|是|[ \t]ist|[ \t]est)?"
_EMPH = r"[ \t*_`]*"


@cache
def _labelled(asked: str) -> re.Pattern[str]:
    """A label and a number: the known labels, and the one the rubric's marker asks for."""
    labels = f"{re.escape(asked)}|{LABELS}" if asked else LABELS
    return re.compile(
        rf"(?<![^\W\d_])(?P<label>{labels}){_EMPH}{_SEP}{_EMPH}(?:of\s+)?{_VALUE}(?![\d.,]*\d)",
        re.IGNORECASE,
    )


_BRACKETED = re.compile(rf"\[\[[ \t]*{_NUM}{_DEN}[ \t]*\]\]")
_BRACKET_LINE = re.compile(rf"^[ \t*_`>#]*\[[ \t]*{_NUM}{_DEN}[ \t]*\][ \t*_`.]*$", re.MULTILINE)
_BARE = re.compile(rf"[\s*_`#>]*(?P<open>\[\[|\[)?\s*{_NUM}{_DEN}\s*(?P<close>\]\]|\])?[\s*_`.]*")
_PHRASE = re.compile(
    r"\bI(?:'d|\s+would|\s+will|\s+can)?\s+(?:rate|score|grade|give|assign|award)\s+"
    r"(?:it|this|that|the\s+(?:assistant'?s?\s+)?(?:response|answer|reply))"
    r"(?:\s+(?:response|answer))?\s+(?:an?\s+|as\s+(?:an?\s+)?|with\s+(?:an?\s+)?)?"
    rf"{_NUM}{_DEN}(?![\d.,]*\d)",
    re.IGNORECASE,
)
_LINE_START = re.compile(r"^[\s>#*_`\-•]*(?:\d+[.)]\s+)?")
_CLOSING_TAIL = re.compile(r"[\s*_`.。!！)）\]」]*$")
_SENTENCE_END = re.compile(r"[.!?。！？:：)）\]」*_`]\s*$")
_COMMENT_START = re.compile(r"[\s*_`]*(?:[-–—:：.;,(（|]|[\u3040-\u9fff\uac00-\ud7af])")
_BOUNDARY = re.compile(r"[.!?。！？](?!\d)|\n")
_EXAMPLE = re.compile(
    r"for\s+example|for\s+instance|e\.\s?g\.|such\s+as|like\s+this|(?:the|this|following)"
    r"\s+(?:format|formula|template)|in\s+the\s+format|format:|例えば|例：|例:|形式で|例如|比如"
    r"|格式|zum\s+beispiel|par\s+exemple|por\s+ejemplo|например|na\s+przykład|ví\s+dụ|contoh",
    re.IGNORECASE,
)
_OTHER = r"(?:reference|ideal|perfect|gold|model|other|first|previous|earlier)"
_OTHER_SUBJECT = re.compile(
    rf"\b{_OTHER}(?:\s+(?:answer|response|solution|turn|assistant))?(?:'s)?\s+(?:would|could"
    r"|should|might|will|deserves?|gets?|earns?|receives?|merits?|is\s+rated|scores?)\b"
    r"|\bassistant\s+b\b|(?:参考|模範|正解例)(?:回答|解答|答案)?(?:は|なら|の(?:評価|点数))"
    r"|(?:参考|标准)答案(?:的)?(?:评分|得分|可以|应)",
    re.IGNORECASE,
)
_CONDITIONAL = re.compile(
    r"\b(?:if|unless|would\s+have|could\s+have|might\s+have|rather\s+than|instead\s+of"
    r"|could\s+(?:be|earn|get|receive|reach|achieve)|potentially)\b|もし|如果|若是",
    re.IGNORECASE,
)
_OR = r"(?:or|to|-|–|~|～|または|或)"
_ALTERNATIVE_AFTER = re.compile(rf"[\s*_(（]*{_OR}\s*\[*\s*\d", re.IGNORECASE)
_ALTERNATIVE_BEFORE = re.compile(rf"\d\s*\]*\s*{_OR}[\s*_]*$", re.IGNORECASE)
_FENCE = re.compile(r"^[ \t]*(?:```|~~~)", re.MULTILINE)
#: A bare ``[[N]]`` right after ``=``, ``(``, ``,`` or ``[`` is a value in code (``m = [[1]]``).
_CODE_BEFORE = re.compile(r"[=(,\[{][ \t]*$")
_NEGATED = re.compile(r"(?:\b(?:not|never|no|cannot)|n't)\s+(?:\w+\s+){0,3}$", re.IGNORECASE)


@dataclass(frozen=True)
class Candidate:
    """One rating the reply writes.

    Attributes:
        value: The number as written.
        out_of: The denominator of ``8/10`` or ``8 out of 10``.
        raw: The candidate as written (``Rating: [[2]]``).
        start: Its offset in the reply's answer text.
        end: Where it ends.
        place: ``line``, ``closing``, ``opening``, ``sentence``, ``whole`` or ``phrase``.
        problem: Why it is not the verdict (``None``: it is): ``sentence``, ``echoed``,
            ``example``, ``other`` (rates something else), ``conditional`` (``if``, ``would
            have``, ``[[9]] or [[10]]``), ``negated`` (``not a [[10]]``), ``code`` (in a
            fenced block or after ``=``).
        context: The sentence it stands in, for reasons.
        label: The label written before the number (``""`` for ``[[7]]``).
    """

    value: float
    out_of: int | None
    raw: str
    start: int
    end: int
    place: str
    problem: str | None
    context: str
    label: str = ""

    @property
    def taken(self) -> bool:
        """Whether a careful reader takes this candidate as the verdict."""
        return self.problem is None


def find_candidates(reply: ReplyInput) -> list[Candidate]:
    """Every rating candidate in the answer text, in order, each with its place and problem."""
    text = "\n".join(reply.lines())
    found: list[Candidate] = []
    covered: list[tuple[int, int]] = []
    for match in _labelled(reply.marker.label).finditer(text):
        if _unbalanced(match):
            continue
        found.append(_classify(reply, text, match, match["label"]))
        covered.append(match.span())
    for pattern in (_BRACKETED, _BRACKET_LINE):
        for match in pattern.finditer(text):
            if not any(a <= match.start() < b for a, b in covered):
                found.append(_classify(reply, text, match, ""))
                covered.append(match.span())
    whole = _BARE.fullmatch(text.strip())
    if whole and not found and bool(whole["open"]) == bool(whole["close"]):
        found.append(_make(whole, text.strip(), text.find(text.strip()), "whole", None, ""))
    if not any(c.taken for c in found):
        for match in _PHRASE.finditer(text):
            found.append(_classify(reply, text, match, "", phrase=True))
    return sorted(found, key=lambda c: c.start)


def _unbalanced(match: re.Match[str]) -> bool:
    """``[[7]`` or ``7]]``: brackets that do not pair up are not a value."""
    opened, closed = match["open"] or "", match["close"] or ""
    return len(opened) != len(closed)


def _make(
    match: re.Match[str], text: str, offset: int, place: str, problem: str | None, label: str
) -> Candidate:
    den = match.groupdict().get("den")
    context = _sentence(text, match.start(), match.end())
    return Candidate(
        float(match["number"]), int(den) if den else None, match.group(0).strip(),
        offset + match.start(), offset + match.end(), place, problem, context, label,
    )  # fmt: skip


def _classify(
    reply: ReplyInput, text: str, match: re.Match[str], label: str, *, phrase: bool = False
) -> Candidate:
    """Where a candidate stands and what, if anything, keeps it from being the verdict."""
    line_start = text.rfind("\n", 0, match.start()) + 1
    line_end = text.find("\n", match.end())
    line_end = len(text) if line_end < 0 else line_end
    before = text[line_start : match.start()]
    after = text[match.end() : line_end]
    lead = _LINE_START.match(before)
    before_text = before[lead.end() :] if lead else before
    bracketed = (match.groupdict().get("open") or "").startswith("[[") or not label
    if phrase:
        place = "phrase"
    elif not before_text.strip() and not _CLOSING_TAIL.sub("", after):
        place = "line"
    elif not _CLOSING_TAIL.sub("", after) and (
        _SENTENCE_END.search(before_text) or bracketed or label.startswith("[")
    ):
        place = "closing"
    elif not before_text.strip() and (bracketed or _COMMENT_START.match(after)):
        place = "opening"
    else:
        place = "sentence"
    problem = _problem(reply, text, match, place, line_start, line_end)
    return _make(match, text, 0, place, problem, label)


def _problem(
    reply: ReplyInput, text: str, match: re.Match[str], place: str, line_start: int, line_end: int
) -> str | None:
    """Why this candidate is not the verdict, or None."""
    sentence = _sentence(text, match.start(), match.end())
    line = text[line_start:line_end]
    if reply.echoes.has_line(line) or _copied(reply, sentence, match.group(0)):
        return "echoed"
    if _in_code(text, match.start(), line_start, line_end) or (
        match.re is _BRACKETED and _CODE_BEFORE.search(text, line_start, match.start())
    ):
        return "code"
    if _EXAMPLE.search(sentence):
        return "example"
    if _OTHER_SUBJECT.search(
        text[max(_sentence_start(text, match.start()), match.start() - 60) : match.start()]
    ):
        return "other"
    before = text[max(0, match.start() - 40) : match.start()]
    if (
        _CONDITIONAL.search(sentence)
        or _ALTERNATIVE_AFTER.match(text, match.end())
        or _ALTERNATIVE_BEFORE.search(before)
    ):
        return "conditional"
    if _NEGATED.search(before):
        return "negated"
    asked = reply.marker.brackets == 2 and (match.groupdict().get("open") or "") == "[["
    bare_asked = reply.marker.brackets == 2 and match.re is _BRACKETED
    if place == "sentence" and not (asked or bare_asked):
        return "sentence"
    return None


def _in_code(text: str, start: int, line_start: int, line_end: int) -> bool:
    """Whether offset ``start`` is inside a fenced code block set in prose.

    A whole reply wrapped in a fence is the judge's answer, not code, and so is a block that
    holds only the candidate's line.
    """
    fences = [m.start() for m in _FENCE.finditer(text)]
    for opened, closed in zip(fences[::2], fences[1::2], strict=False):
        if opened < start < closed:
            after = text.find("\n", closed)
            outside = text[:opened] + (text[after:] if after >= 0 else "")
            inside = text[text.find("\n", opened) + 1 : closed]
            return bool(outside.strip()) and inside.strip() != text[line_start:line_end].strip()
    return False


def _copied(reply: ReplyInput, sentence: str, raw: str) -> bool:
    """Whether the candidate's sentence is text from the request (longer than the rating)."""
    collapsed = " ".join(sentence.split())
    if len(collapsed) <= len(" ".join(raw.split())) + 12:
        return False
    return reply.echoes.has_span(collapsed)


def _sentence_start(text: str, start: int) -> int:
    """Where the sentence holding offset ``start`` begins (after the last boundary)."""
    head = 0
    for boundary in _BOUNDARY.finditer(text, 0, start):
        head = boundary.end()
    return head


def _sentence(text: str, start: int, end: int) -> str:
    """The sentence around ``text[start:end]`` (from the last boundary to the next one)."""
    tail = _BOUNDARY.search(text, end)
    return text[_sentence_start(text, start) : tail.end() if tail else len(text)].strip()


def describe(candidate: Candidate) -> str:
    """One line naming the candidate and why it is not the verdict (for reasons)."""
    shown = f"`{normalise_line(candidate.raw)}`"
    context = " ".join(candidate.context.split())
    if len(context) > 90:
        context = context[:87] + "..."
    return {
        "sentence": f"found {shown} inside a sentence; the rubric wants it on its own line",
        "echoed": f"found {shown} only in text copied from the request ({context!r})",
        "example": f"found {shown} only in a quoted example ({context!r})",
        "other": f"found {shown}, but it rates something else ({context!r})",
        "conditional": f"found {shown} only in a conditional phrase or beside another value "
        f"({context!r})",
        "negated": f"found {shown} only in a negated phrase ({context!r})",
        "code": f"found {shown} only in code ({context!r})",
    }.get(candidate.problem or "", f"found {shown}")


def is_english_label(label: str) -> bool:
    """Whether a label is one of the English ones (others are ``score_label_language``)."""
    return " ".join(label.casefold().split()).split(" ")[-1] in _ENGLISH_LABELS
