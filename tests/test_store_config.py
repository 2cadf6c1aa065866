"""Session store (atomic saves, version checks) and config precedence."""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path

import pytest

from osce_tui.config import Config, ConfigError, load_config
from osce_tui.domain.scores import ItemScore, ScoreSet, SectionScore
from osce_tui.domain.session import PatientNote, Session, Usage
from osce_tui.store import SessionFileError, list_sessions, load_session, save_session


def _session(n_turns: int = 3) -> Session:
    s = Session(case_id="mini-sore-throat")
    for i in range(n_turns):
        s.add_turn("doctor" if i % 2 == 0 else "patient", f"turn {i} " + "x" * 200)
    return s


def test_roundtrip(tmp_path):
    s = _session()
    s.note = PatientNote(hpi="h", pe="p", workup=["throat swab", " "])
    s.add_usage("patient", Usage(input_tokens=5, output_tokens=7, calls=1))
    path = save_session(s, tmp_path / "a.json")
    back = load_session(path)
    assert back == s
    assert back.note.workup == ["throat swab"]
    assert back.total_usage.total_tokens == 12
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "temp file left behind"


def _writer(path: str, rounds: int) -> None:
    for i in range(rounds):
        save_session(_session(n_turns=1 + (i % 50)), Path(path))


def test_reader_never_sees_a_half_written_file(tmp_path):
    """A concurrent reader loads every version it sees completely."""
    path = tmp_path / "s.json"
    save_session(_session(), path)
    proc = multiprocessing.get_context("fork").Process(target=_writer, args=(str(path), 300))
    proc.start()
    reads = 0
    while proc.is_alive() or reads < 50:
        data = json.loads(path.read_text())  # raises on a torn file
        assert data["case_id"] == "mini-sore-throat"
        reads += 1
        if reads > 5000:
            break
    proc.join()
    assert proc.exitcode == 0
    assert reads >= 50


def test_corrupt_foreign_and_future_files_are_rejected_clearly(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema_version": 1, "case_id": ')
    with pytest.raises(SessionFileError, match="corrupt JSON"):
        load_session(bad)
    foreign = tmp_path / "foreign.json"
    foreign.write_text('{"hello": "world"}')
    with pytest.raises(SessionFileError, match="not an osce-tui session"):
        load_session(foreign)
    future = tmp_path / "future.json"
    future.write_text(json.dumps({"schema_version": 99, "case_id": "x"}))
    with pytest.raises(SessionFileError, match="newer"):
        load_session(future)
    invalid = tmp_path / "invalid.json"
    invalid.write_text(json.dumps({"schema_version": 1, "case_id": "x", "turns": [{"role": "nurse", "text": "hi"}]}))
    with pytest.raises(SessionFileError, match="turns"):
        load_session(invalid)


def test_list_sessions_skips_broken_files(tmp_path):
    save_session(_session(), tmp_path / "ok.json")
    (tmp_path / "broken.json").write_text("{")
    (tmp_path / "summary.json").write_text("{}")
    summaries, errors = list_sessions(tmp_path)
    assert [s.path.name for s in summaries] == ["ok.json"]
    assert len(errors) == 1 and "broken.json" in errors[0]


def test_score_sets_are_added_beside_never_overwritten():
    s = _session()
    item = ItemScore(criterion_id="c", label="c", points=1, max_points=2)
    final_a = ScoreSet(rubric_id="r", judge="offline", sections=[SectionScore(section_id="s", title="S", judge="offline", items=[item])])
    s.put_scores(final_a)
    s.put_scores(final_a.model_copy(deep=True))
    live1 = ScoreSet(rubric_id="r", judge="offline", final=False)
    live2 = ScoreSet(rubric_id="r", judge="offline", final=False)
    s.put_scores(live1)
    s.put_scores(live2)
    assert [x.final for x in s.scores] == [True, True, False]
    assert s.latest_scores().sections[0].score_100 == 50.0
    assert s.latest_scores(final_only=False) is live2


def test_total_is_weighted_mean_and_skips_empty_sections():
    def sec(sid, pts, mx):
        return SectionScore(section_id=sid, title=sid, judge="offline", items=[ItemScore(criterion_id="c", label="c", points=pts, max_points=mx)])

    empty = SectionScore(section_id="e", title="e", judge="offline", items=[ItemScore(criterion_id="c", label="c", max_points=5, status="excluded")])
    ss = ScoreSet(rubric_id="r", judge="offline", sections=[sec("a", 5, 10), sec("b", 10, 10), empty], section_weights={"a": 3})
    assert empty.score_100 is None
    assert ss.total == pytest.approx((3 * 50 + 100) / 4)


# -- config ---------------------------------------------------------------------


def test_config_precedence_file_env_cli(tmp_path):
    cfg_file = tmp_path / "config.toml"
    cfg_file.write_text('rubric = "from-file"\nsessions_dir = "file-sessions"\n[provider]\ntimeout = 11\nmax_retries = 5\n')
    env = {"OSCE_TUI_RUBRIC": "from-env", "OSCE_TUI_PROVIDER__TIMEOUT": "22", "UNRELATED": "x"}
    cfg = load_config({"rubric": "from-cli"}, path=cfg_file, environ=env)
    assert cfg.rubric == "from-cli"  # CLI beats env and file
    assert cfg.provider.timeout == 22  # env beats file
    assert cfg.provider.max_retries == 5  # file beats default
    assert cfg.sessions_dir == Path("file-sessions")
    assert load_config(path=tmp_path / "missing.toml", environ={}) == Config()


def test_env_lists_and_nested_roles(tmp_path):
    env = {"OSCE_TUI_CASES_DIRS": os.pathsep.join(["/a", "/b"]), "OSCE_TUI_ROLES__PATIENT": "openai/gpt-4o"}
    cfg = load_config(path=tmp_path / "none.toml", environ=env)
    assert cfg.cases_dirs == [Path("/a"), Path("/b")]
    assert cfg.roles.patient == "openai/gpt-4o"
    assert cfg.roles.doctor == "human"


def test_bad_config_names_the_field(tmp_path):
    cfg_file = tmp_path / "config.toml"
    cfg_file.write_text("[provider]\ntimeout = -1\n")
    with pytest.raises(ConfigError, match="provider.timeout"):
        load_config(path=cfg_file, environ={})
    cfg_file.write_text("rubric = [")
    with pytest.raises(ConfigError, match="config.toml"):
        load_config(path=cfg_file, environ={})
