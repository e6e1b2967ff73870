"""A colleague's rubric folder never runs code or reads the environment (issue 38, item 1).

Each template below is a known Jinja escape from a sandbox-less environment; in a user's rubric
folder every one is refused with one line naming the template file, no marker file appears
and no environment value reaches the prompt. The packaged rubrics still render unsandboxed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from judgekit.cli.main import main
from judgekit.rubrics import load_rubric
from judgekit.rubrics.environment import RUBRICS_DIR, TemplateRefused
from judgekit.types import Item, UsageError

CANARY = "canary-value-of-the-key-0123456789"


def escapes(marker: Path) -> dict[str, str]:
    """Each escape, written to create ``marker`` or print ``$OPENAI_API_KEY``."""
    shell = f"touch {marker}"
    return {
        "cycler": f"{{% set _ = cycler.__init__.__globals__.os.system('{shell}') %}}",
        "joiner": f"{{{{ joiner.__init__.__globals__.os.popen('{shell}').read() }}}}",
        "namespace": f"{{{{ namespace.__init__.__globals__['os'].system('{shell}') }}}}",
        "self": (
            f"{{{{ self.__init__.__globals__.__builtins__.__import__('os').system('{shell}') }}}}"
        ),
        "lipsum": "{{ lipsum.__globals__['os'].environ['OPENAI_API_KEY'] }}",
        "config": "{{ config.__class__.__init__.__globals__['os'].environ }}",
        "request": "{{ request.application.__globals__.__builtins__.__import__('os') }}",
        "mro": (
            "{% for c in ''.__class__.__mro__[1].__subclasses__() %}"
            "{% if c.__name__ == 'Popen' %}{{ c(['touch', '" + str(marker) + "']) }}"
            "{% endif %}{% endfor %}"
        ),
        "format": "{{ '{0.__class__.__init__.__globals__}'.format(cycler) }}",
        "mutation": "{% set d = {} %}{{ d.update({'a': 1}) }}",
    }


def hostile_folder(tmp_path: Path, body: str) -> Path:
    """A copy of the packaged factual_accuracy rubric whose base variant starts with ``body``."""
    folder = tmp_path / "colleague"
    shutil.copytree(RUBRICS_DIR / "factual_accuracy", folder)
    config = folder / "config.yaml"
    config.write_text(
        config.read_text(encoding="utf-8").replace("name: factual_accuracy", "name: colleague"),
        encoding="utf-8",
    )
    base = folder / "variants" / "base.j2"
    base.write_text(body + "\n" + base.read_text(encoding="utf-8"), encoding="utf-8")
    return folder


ITEM = Item("1", {"Question": "What is 2+2?", "Answer": "4"})


@pytest.mark.parametrize("escape", sorted(escapes(Path("/m"))))
def test_every_known_escape_is_refused_in_one_line_naming_the_file(
    escape: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    marker = tmp_path / "pwned"
    folder = hostile_folder(tmp_path, escapes(marker)[escape])
    rubric = load_rubric(folder)
    with pytest.raises(TemplateRefused) as caught:
        rubric.render([ITEM])
    message = str(caught.value)
    assert isinstance(caught.value, UsageError)
    assert "\n" not in message and CANARY not in message
    assert str(folder / "variants" / "base.j2") in message
    assert not marker.exists()


def test_rubrics_show_on_a_hostile_folder_is_one_line_and_runs_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    marker = tmp_path / "pwned"
    folder = hostile_folder(tmp_path, escapes(marker)["cycler"])
    assert main(["rubrics", "show", str(folder)]) != 0
    shown = capsys.readouterr()
    assert not marker.exists()
    assert CANARY not in shown.out + shown.err
    assert "template refused" in shown.err and "Traceback" not in shown.err


def test_an_environment_value_never_reaches_a_prompt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    for name, body in escapes(tmp_path / "m").items():
        rubric = load_rubric(hostile_folder(tmp_path / name, body))
        try:
            messages = rubric.render([ITEM])
        except TemplateRefused:
            continue
        assert CANARY not in str(messages), name  # pragma: no cover - a leak is the failure


def test_a_plain_user_folder_and_the_packaged_rubrics_still_render(tmp_path: Path) -> None:
    folder = hostile_folder(tmp_path, "{# a comment, no escape #}")
    mine, ours = load_rubric(folder), load_rubric("factual_accuracy")
    # A user's folder gets the format's reminder only with `format_reminder: true`
    # (docs/own-prompt.md): the same items message, without the packaged rubric's last line.
    users, packaged = mine.render([ITEM])[1]["content"], ours.render([ITEM])[1]["content"]
    assert packaged.startswith(users) and "SCORE: N" in packaged[len(users) :]
    assert mine.system_prompt() == ours.system_prompt()
    assert type(ours.environment()).__name__ == "Environment"


def test_a_syntax_error_in_a_users_template_is_one_line(tmp_path: Path) -> None:
    rubric = load_rubric(hostile_folder(tmp_path, "{% if %}"))
    with pytest.raises(TemplateRefused, match=r"base\.j2, line 1: template syntax error"):
        rubric.render([ITEM])
