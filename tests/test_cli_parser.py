"""Top-level CLI wiring: the home screen's own options, help without textual."""

from __future__ import annotations

from pathlib import Path

from osce_tui.cli import build_parser


def test_home_options_do_not_collide_with_subcommand_options():
    args = build_parser().parse_args(["--cases-dir", "a", "--cases-dir", "b", "--sessions-dir", "s"])
    assert args.home_cases_dir == [Path("a"), Path("b")]
    assert args.home_sessions_dir == Path("s")
    assert getattr(args, "handler", None) is None  # bare osce-tui opens the home screen

    sub = build_parser().parse_args(["cases", "list", "--cases-dir", "x"])
    assert sub.cases_dir == [Path("x")]
    assert sub.home_cases_dir == []


def test_every_documented_command_is_registered():
    parser = build_parser()
    for argv in (
        ["run", "chest-pain-46m"],
        ["chat", "chest-pain-46m"],
        ["cases", "list"],
        ["cases", "validate"],
        ["cases", "import", "agentclinic", "f.jsonl", "--out", "d"],
        ["rubrics", "show", "medqa-cs"],
        ["sessions", "list"],
        ["sessions", "replay", "f.json"],
        ["sessions", "import", "craftmd", "d", "--out", "o"],
        ["batch", "run", "--cases", "all", "--out", "o"],
        ["batch", "score", "s"],
        ["report", "d"],
        ["agreement", "f.csv"],
        ["schema", "session"],
    ):
        assert parser.parse_args(argv).handler is not None, argv
