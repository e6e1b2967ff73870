"""A panel of judges on one study that accumulates, through the CLI, against the simulator.

Every judge is its own simulator on its own port expecting its own key: a request carrying
another key is answered 401 and counted at that server, so "each key goes only to its own
provider" is checked where the key arrives. Calls are counted at the servers too.
"""

from __future__ import annotations

import io
import json
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pandas as pd
import pytest
from riddle_items import write_riddle_items

from judgekit.cli.main import main
from judgekit.sharing.verify import verify_bundle
from judgekit.simulator import SimulatorConfig, SimulatorHandle, run_simulator
from judgekit.study.label_map import apply_label_map, parse_label_map

IDS = ["r1", "r2", "r3", "r4", "r5", "r6"]
HUMAN = [5, 0, 3, 5, 0, 3]
#: Each judge's simulator: its key and how it scores (so the judges differ).
JUDGES = {
    "a": ("key-for-a", dict(zip(IDS, [5, 0, 3, 5, 0, 3], strict=True))),
    "b": ("key-for-b", dict(zip(IDS, [5, 3, 3, 5, 0, 0], strict=True))),
    "c": ("key-for-c", dict(zip(IDS, [3, 0, 3, 5, 3, 3], strict=True))),
    "d": ("key-for-d", dict(zip(IDS, [5, 0, 0, 5, 0, 3], strict=True))),
}
BATCH = 2  # three requests per judge, rubric, variant and run
ACCURACY = ("--rubric", "riddle_accuracy")


@pytest.fixture
def servers() -> Iterator[dict[str, SimulatorHandle]]:
    with ExitStack() as stack:
        yield {
            name: stack.enter_context(
                run_simulator(
                    SimulatorConfig(api_key=key, oracle={k: float(v) for k, v in truth.items()})
                )
            )
            for name, (key, truth) in JUDGES.items()
        }


@pytest.fixture
def items(tmp_path: Path) -> Path:
    models = ["GPT", "Claude", "Gemini"] * 2
    return write_riddle_items(tmp_path / "riddles.csv", IDS, models, Human_Accuracy=HUMAN)


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "JUDGEKIT_JUDGE_MODEL"):
        monkeypatch.delenv(variable, raising=False)
    for name, (key, _) in JUDGES.items():
        monkeypatch.setenv(f"PANEL_KEY_{name.upper()}", key)
    monkeypatch.setenv("JUDGEKIT_SIMULATOR_API_KEY", JUDGES["d"][0])  # the preset's own variable
    monkeypatch.setenv("TQDM_DISABLE", "1")


@pytest.fixture
def judge_d(servers: dict[str, SimulatorHandle]) -> list[str]:
    """Judge d alone (its key: the preset's own variable)."""
    return ["--judge", f"d=simulator:judge-d@{servers['d'].base_url}"]


def panel_file(tmp_path: Path, servers: dict[str, SimulatorHandle], keys: dict[str, str]) -> Path:
    """A panel of judges a, b, c; ``keys`` names each judge's key variable."""
    lines = ["judges:"]
    for name in "abc":
        lines += [
            f"  - judge: simulator:judge-{name}@{servers[name].base_url}",
            f"    label: {name}",
            f"    api_key_env: {keys[name]}",
            "    max_concurrency: 2",
            "    prices: {input: 1.0, output: 2.0}",
        ]
    path = tmp_path / "panel.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def calls(servers: dict[str, SimulatorHandle]) -> dict[str, int]:
    return {name: len(handle.requests) for name, handle in servers.items()}


def judge(items: Path, study: Path, *extra: str) -> int:
    args = ["judge", str(items), "--study", str(study), "--batch-size", str(BATCH), *extra]
    return main(args)


def own_keys(tmp_path: Path, servers: dict[str, SimulatorHandle]) -> Path:
    return panel_file(tmp_path, servers, {n: f"PANEL_KEY_{n.upper()}" for n in "abc"})


def test_a_panel_judges_once_then_replays_and_adding_a_judge_pays_only_for_it(
    tmp_path: Path,
    items: Path,
    servers: dict[str, SimulatorHandle],
    capsys: pytest.CaptureFixture[str],
) -> None:
    study, panel = tmp_path / "study", own_keys(tmp_path, servers)
    accuracy = ["--rubric", "riddle_accuracy", "--panel", str(panel)]
    assert judge(items, study, *accuracy) == 0
    assert calls(servers) == {"a": 3, "b": 3, "c": 3, "d": 0}
    first = capsys.readouterr().err
    for name in "abc":
        assert (
            f"judge {name}\nstatus      rows\nok             6\ncalls made 3, replayed 0" in first
        )
    assert "cost $" in first  # the panel file gave prices

    assert judge(items, study, *accuracy) == 0  # the same panel again: nothing is paid
    assert calls(servers) == {"a": 3, "b": 3, "c": 3, "d": 0}
    again = capsys.readouterr().err
    assert (
        "already in the study, judged again (what the store holds is replayed, not paid): " in again
    )
    assert again.count("calls made 0, replayed 3") == 3

    d = f"d=simulator:judge-d@{servers['d'].base_url}"
    assert judge(items, study, "--rubric", "riddle_accuracy", "--judge", d) == 0
    assert calls(servers) == {"a": 3, "b": 3, "c": 3, "d": 3}  # only the new judge was asked
    assert all(handle.rejected_keys == 0 for handle in servers.values())

    table = pd.read_parquet(study / "judgments.parquet")
    assert sorted(table["judge"].unique()) == ["a", "b", "c", "d"]
    for name, (_, truth) in JUDGES.items():
        rows = table[table["judge"] == name].set_index("item_id")["score"]
        assert rows.to_dict() == {k: float(v) for k, v in truth.items()}
    scores = sorted(p.name for p in (study / "scores").glob("*-run1.csv"))
    assert scores == [f"riddle_accuracy-base-{n}-run1.csv" for n in "abcd"]
    manifest = json.loads((study / "study.json").read_text(encoding="utf-8"))
    assert [j["label"] for j in manifest["judges"]] == ["a", "b", "c", "d"]
    assert manifest["judges"][0]["api_key_env"] == "PANEL_KEY_A"
    assert manifest["judges"][3]["api_key_env"] == "JUDGEKIT_SIMULATOR_API_KEY"
    assert manifest["judges"][0]["base_url"] == servers["a"].base_url
    assert [len(c["judges"]) for c in manifest["commands"]] == [3, 3, 1]
    assert "--panel" in manifest["commands"][0]["command"]
    judged = [(e["judge"], [c["command"] for c in e["combinations"]]) for e in manifest["judged"]]
    assert judged == [("a", [2]), ("b", [2]), ("c", [2]), ("d", [3])]  # the last to judge each
    assert [e["settings"]["client"]["model"] for e in manifest["judged"]] == [
        f"judge-{n}" for n in "abcd"
    ]
    for path in study.rglob("*"):  # no key anywhere in the study
        if path.is_file():
            data = path.read_bytes()
            assert not any(key.encode() in data for key, _ in JUDGES.values()), path


def test_a_second_rubric_and_variant_are_added_to_the_study_never_replacing_it(
    tmp_path: Path, items: Path, servers: dict[str, SimulatorHandle], judge_d: list[str]
) -> None:
    study = tmp_path / "study"
    accuracy = [*ACCURACY, *judge_d]
    assert judge(items, study, *accuracy) == 0
    assert judge(items, study, *accuracy, "--variant", "paraphrase_1") == 0
    reasoning = ["--rubric", "riddle_reasoning", "--variant", "base", "--variant", "paraphrase_1"]
    assert judge(items, study, *reasoning, "--no-labels", *judge_d) == 0
    assert calls(servers)["d"] == 4 * 3

    table = pd.read_parquet(study / "judgments.parquet")
    combos = table.groupby(["rubric", "variant"])["item_id"].nunique().to_dict()
    assert combos == {
        ("riddle_accuracy", "base"): 6,
        ("riddle_accuracy", "paraphrase_1"): 6,
        ("riddle_reasoning", "base"): 6,
        ("riddle_reasoning", "paraphrase_1"): 6,
    }
    assert pd.read_csv(study / "judgments.csv").shape[0] == len(table)
    scores = sorted(p.name for p in (study / "scores").iterdir() if ".status" not in p.name)
    assert scores == [  # one judge: its label is not in the names
        f"{r}-{v}-run1.csv"
        for r in ("riddle_accuracy", "riddle_reasoning")
        for v in ("base", "paraphrase_1")
    ]
    labels = pd.read_parquet(study / "human_labels.parquet")  # --no-labels kept the earlier ones
    assert labels["rubric"].unique().tolist() == ["riddle_accuracy"] and len(labels) == 6
    manifest = json.loads((study / "study.json").read_text(encoding="utf-8"))
    assert manifest["rubrics"] == ["riddle_accuracy", "riddle_reasoning"]
    assert len(manifest["commands"]) == 3
    accuracy, reasoning = manifest["judged"]
    assert [(c["variant"], c["command"]) for c in accuracy["combinations"]] == [
        ("base", 1), ("paraphrase_1", 2)
    ]  # fmt: skip
    assert accuracy["settings"]["options"]["variants"] == ["base", "paraphrase_1"]
    assert reasoning["rubric"] == "riddle_reasoning" and len(reasoning["combinations"]) == 2
    bundle = tmp_path / "study.zip"  # the accumulated study replays offline, judge by judge
    assert main(["export", str(study), "-o", str(bundle)]) == 0
    assert verify_bundle(bundle, io.StringIO()).problems == []
    assert len(pd.read_csv(study / "items.csv")) == len(IDS)


def test_a_judge_refused_by_its_server_is_reported_and_the_others_work_is_kept(
    tmp_path: Path,
    items: Path,
    servers: dict[str, SimulatorHandle],
    capsys: pytest.CaptureFixture[str],
) -> None:
    study = tmp_path / "study"
    crossed = panel_file(
        tmp_path, servers, {"a": "PANEL_KEY_A", "b": "PANEL_KEY_C", "c": "PANEL_KEY_C"}
    )
    code = judge(items, study, "--rubric", "riddle_accuracy", "--panel", str(crossed))
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1
    assert err[-1].startswith("error: 1 of 3 judges failed (first: b: ") and "401" in err[-1]
    assert err[-1].endswith("; the other judges' judgments are written")
    assert servers["b"].rejected_keys >= 1 and len(servers["b"].requests) == 0
    assert servers["a"].rejected_keys == servers["c"].rejected_keys == 0
    table = pd.read_parquet(study / "judgments.parquet")
    assert sorted(table["judge"].unique()) == ["a", "c"]
    manifest = json.loads((study / "study.json").read_text(encoding="utf-8"))
    assert list(manifest["commands"][0]["failed_judges"]) == ["b"]


def test_the_dry_run_estimates_each_judge_and_sends_nothing(
    tmp_path: Path,
    items: Path,
    servers: dict[str, SimulatorHandle],
    capsys: pytest.CaptureFixture[str],
) -> None:
    panel = own_keys(tmp_path, servers)
    args = ["--rubric", "riddle_accuracy", "--panel", str(panel), "--dry-run"]
    assert judge(items, tmp_path / "study", *args) == 0
    out = capsys.readouterr().out
    assert sum(calls(servers).values()) == 0 and not (tmp_path / "study").exists()
    for name in "abc":
        assert f"judge {name}: judge-{name} at {servers[name].base_url}" in out
    assert out.count("Estimate (rough") == 3 and out.count("Estimated cost: $") == 3
    assert out.count("--- system ---") == 1  # the prompt is shown once: it is every judge's


def test_a_folder_of_the_users_own_files_is_refused_and_left_as_it_was(
    tmp_path: Path,
    items: Path,
    servers: dict[str, SimulatorHandle],
    capsys: pytest.CaptureFixture[str],
    judge_d: list[str],
) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    own = pd.DataFrame({"ID": [f"x{i}" for i in range(300)], "note": "mine"})
    own.to_csv(folder / "items.csv", index=False)
    (folder / "judgments.csv").write_text("ID,score\nx1,5\n", encoding="utf-8")
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.iterdir()}
    code = judge(items, folder, *ACCURACY, *judge_d)
    err = capsys.readouterr().err.strip()
    assert code == 2 and err == (
        f"error: --study {folder} holds files judgekit did not write (items.csv, "
        "judgments.csv); give a new or empty folder, or a study judgekit wrote"
    )
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.iterdir()} == before
    assert len(servers["d"].requests) == 0


def test_a_study_file_changed_by_hand_is_not_overwritten(
    tmp_path: Path,
    items: Path,
    capsys: pytest.CaptureFixture[str],
    judge_d: list[str],
) -> None:
    study = tmp_path / "study"
    assert judge(items, study, *ACCURACY, *judge_d) == 0
    edited = study / "items.csv"
    edited.write_text(
        edited.read_text(encoding="utf-8") + "r9,my own row,,,,,,\n", encoding="utf-8"
    )
    text = edited.read_bytes()
    capsys.readouterr()
    assert judge(items, study, *ACCURACY, *judge_d) == 2
    assert "items.csv changed since judgekit wrote them" in capsys.readouterr().err
    assert edited.read_bytes() == text


def test_labels_off_the_scale_are_mapped_or_left_out_each_said_in_one_line(
    tmp_path: Path,
    items: Path,
    capsys: pytest.CaptureFixture[str],
    judge_d: list[str],
) -> None:
    frame = pd.read_csv(items)
    frame["Human_Accuracy"] = [5, 1, 3, 4, 1, 0]  # 1 and 4 are not on the 0/3/5 scale
    frame.to_csv(items, index=False)
    assert judge(items, tmp_path / "refused", *ACCURACY, *judge_d) == 2
    assert "map labels onto it with --label-map OLD=NEW or leave them out with --no-labels" in (
        capsys.readouterr().err
    )
    assert judge(items, tmp_path / "mapped", *ACCURACY, *judge_d, "--label-map", "1=0,4=") == 0
    err = capsys.readouterr().err
    line = "human labels: column 'Human_Accuracy', mapped 1->0 (2 cells), 4->unlabelled (1 cell)"
    assert f"{line} (--label-map 1=0,4=)" in err
    labels = pd.read_parquet(tmp_path / "mapped" / "human_labels.parquet")
    assert labels.set_index("item_id")["score"].to_dict() == {
        "r1": 5.0, "r2": 0.0, "r3": 3.0, "r5": 0.0, "r6": 0.0
    }  # fmt: skip
    assert pd.read_csv(items)["Human_Accuracy"].tolist() == [5, 1, 3, 4, 1, 0]  # untouched
    assert judge(items, tmp_path / "unlabelled", *ACCURACY, *judge_d, "--no-labels") == 0
    assert "human labels: left out (--no-labels)" in capsys.readouterr().err
    assert pd.read_parquet(tmp_path / "unlabelled" / "human_labels.parquet").empty


def test_the_riddles_v1_map_puts_the_pilots_accuracy_labels_on_the_study_scale(
    shared_datasets: Path,
) -> None:
    from judgekit.riddles import load_riddles_v1
    from judgekit.riddles.data import off_scale_labels

    v1 = load_riddles_v1(shared_datasets / "hungarian-riddles")
    mapping = parse_label_map("riddles-v1", "Human_Accuracy")
    mapped, said = apply_label_map(v1, "Human_Accuracy", mapping)
    assert said == "mapped 1->0 (92 cells), 4->unlabelled (1 cell)"
    numbers = pd.to_numeric(mapped["Human_Accuracy"].replace("", None)).astype("Int64")
    assert off_scale_labels(mapped.assign(Human_Accuracy=numbers)).empty
    assert mapped.loc[mapped["ID"] == "Q041-A", "Human_Accuracy"].item() == ""
    assert parse_label_map("riddles-v1", "Human_Reasoning") == {}  # on its scale already


def test_a_first_run_cut_short_resumes_in_its_folder_without_paying_again(
    tmp_path: Path, items: Path, servers: dict[str, SimulatorHandle], judge_d: list[str]
) -> None:
    study = tmp_path / "study"
    assert judge(items, study, *ACCURACY, *judge_d) == 0
    for path in sorted(study.rglob("*"), reverse=True):  # as if killed before the outputs
        if path.name != "responses.sqlite":
            path.rmdir() if path.is_dir() else path.unlink()
    assert judge(items, study, *ACCURACY, *judge_d) == 0
    assert len(servers["d"].requests) == 3  # the replies the first run paid for, replayed
    assert (study / "study.json").is_file()


def test_judges_are_written_as_provider_model_url_with_an_optional_label() -> None:
    from judgekit.judging.clients import EndpointOptions
    from judgekit.judging.panel import command_judges, panel_from_entries, parse_judge

    limits = EndpointOptions(requests_per_minute=60.0)
    plain = parse_judge("ollama:llama3.1:8b", limits)  # a model name may hold a colon
    assert (plain.label, plain.endpoint.provider, plain.endpoint.model) == (
        "ollama:llama3.1:8b", "ollama", "llama3.1:8b"
    )  # fmt: skip
    assert plain.endpoint.base_url is None and plain.endpoint.requests_per_minute == 60.0
    named = parse_judge("big=vllm:Qwen/Qwen2.5-72B@http://gpu:8000/v1")
    assert (named.label, named.endpoint.model, named.endpoint.base_url) == (
        "big", "Qwen/Qwen2.5-72B", "http://gpu:8000/v1"
    )  # fmt: skip
    entries = [
        "openai:gpt-4.1",
        {"provider": "vllm", "model": "m", "label": "v", "rpm": 10, "api_key_env": "GPU_KEY"},
    ]
    first, second = panel_from_entries(entries, limits)  # a panel file's `judges:` list
    assert first.endpoint.requests_per_minute == 60.0  # the shared limit, unless its own
    assert (second.label, second.endpoint.api_key_env, second.endpoint.requests_per_minute) == (
        "v", "GPU_KEY", 10
    )  # fmt: skip
    (alone,) = command_judges((), None, EndpointOptions("m", provider="vllm"))
    assert alone.label == "vllm:m"  # no panel: the one judge, labelled PROVIDER:MODEL


def test_the_judges_run_at_once_each_within_its_own_limit(tmp_path: Path, items: Path) -> None:
    with ExitStack() as stack:
        slow = [stack.enter_context(run_simulator(SimulatorConfig(latency_s=0.8))) for _ in "xyz"]
        seen: list[tuple[int, ...]] = []
        done = threading.Event()

        def watch() -> None:  # every judge's request count, as the run goes
            while not done.is_set():
                seen.append(tuple(len(handle.requests) for handle in slow))
                time.sleep(0.02)

        watcher = threading.Thread(target=watch)
        watcher.start()
        judges = [f"{n}=simulator:m-{n}@{h.base_url}" for n, h in zip("xyz", slow, strict=True)]
        args = ["--rubric", "riddle_accuracy", "--max-concurrency", "1", "--batch-size", "3"]
        try:
            code = main(["judge", str(items), "--study", str(tmp_path / "s"), *args,
                         *(a for j in judges for a in ("--judge", j))])  # fmt: skip
        finally:
            done.set()
            watcher.join()
    assert code == 0 and seen[-1] == (2, 2, 2)
    # all three judges at once, each holding its second request back (its limit of one in
    # flight) while the first is answered: one request each, for most of the 0.8 s latency
    assert seen.count((1, 1, 1)) >= 5, seen


def test_a_study_written_before_panels_is_added_to_not_doubled(
    tmp_path: Path, items: Path, servers: dict[str, SimulatorHandle], judge_d: list[str]
) -> None:
    study = tmp_path / "study"
    assert judge(items, study, *ACCURACY, *judge_d) == 0
    old = pd.read_parquet(study / "judgments.parquet").drop(columns="judge")  # layout 1
    old.to_parquet(study / "judgments.parquet", index=False)
    old.to_csv(study / "judgments.csv", index=False)
    (study / "study.json").write_text(json.dumps({"judgekit": "0.1", "rubric": "riddle_accuracy"}))
    assert judge(items, study, *ACCURACY, *judge_d) == 0
    assert len(servers["d"].requests) == 3  # replayed
    table = pd.read_parquet(study / "judgments.parquet")
    assert table["judge"].tolist() == ["d"] * len(IDS)  # the old rows are the same judge's
