"""`osce-tui` (home), `osce-tui run CASE` and session replay: the Textual app.

textual is imported inside the handlers only, so headless commands stay light.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..providers.base import SpecError, parse_spec
from ..store import SessionFileError, load_session
from ..tui.spec_check import provider_problem
from .common import CliError, add_library_args, add_role_args, config_from_args, get_case, get_rubric, library_from_args

# Seconds the TUI holds after each turn when two agents play: offline agents
# finish a whole encounter in a second or two, too fast to read or to take over.
WATCH_PACE = 0.8


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run",
        help="open the TUI straight into an encounter",
        description="Open the TUI straight into an encounter (defaults: doctor human, patient offline, judge offline).",
    )
    p.add_argument("case", metavar="CASE", help="case id (see `osce-tui cases list`) or path to a case .toml")
    add_role_args(p)
    add_library_args(p)
    p.add_argument("--timers", action="store_true", help="enforce phase timers (otherwise they are shown only)")
    p.set_defaults(handler=cmd_run)


def _check_specs(args: argparse.Namespace, config) -> dict[str, str]:
    specs = {
        "doctor": args.doctor or config.roles.doctor,
        "patient": args.patient or config.roles.patient,
        "judge": args.judge or config.roles.judge,
    }
    for role, spec in specs.items():
        try:
            parsed = parse_spec(spec)
        except SpecError as exc:
            raise CliError(f"--{role}: {exc}") from exc
        if role == "judge" and parsed.provider == "human":
            raise CliError("--judge: a human cannot be the judge; use offline or a model spec")
        # A missing API key fails here, before the screen opens, not inside it.
        problem = provider_problem(spec, config)
        if problem:
            raise CliError(f"--{role}: {problem}")
    return specs


def _inherit_home_options(args: argparse.Namespace) -> None:
    """Honour `osce-tui --sessions-dir D --cases-dir C run CASE` too.

    The options before the command are parsed for the home screen; without
    this, a user who put them there would find the encounter saved in the
    default folder and missing from the home screen they then open.
    """
    if not getattr(args, "sessions_dir", None) and getattr(args, "home_sessions_dir", None):
        args.sessions_dir = args.home_sessions_dir
    home_cases = getattr(args, "home_cases_dir", None) or []
    if home_cases:
        args.cases_dir = [*home_cases, *(getattr(args, "cases_dir", None) or [])]


def cmd_run(args: argparse.Namespace) -> int:
    _inherit_home_options(args)
    config = config_from_args(args)
    library = library_from_args(args, config)
    case = get_case(library, args.case)
    rubric_id = args.rubric or config.rubric
    get_rubric(library, rubric_id)  # fail before the screen opens
    specs = _check_specs(args, config)

    from ..tui.app import OsceApp, RunRequest

    start = RunRequest(case=case, rubric=rubric_id, timers=bool(args.timers or config.encounter.timers), **specs)
    OsceApp(config, library, start=start, watch_pace=WATCH_PACE).run()
    return 0


def cmd_home(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    library = library_from_args(args, config)

    from ..tui.app import OsceApp

    OsceApp(config, library, watch_pace=WATCH_PACE).run()
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    _inherit_home_options(args)
    path = Path(args.file)
    try:
        session = load_session(path)
    except SessionFileError as exc:
        raise CliError(str(exc)) from exc
    config = config_from_args(args)
    library = library_from_args(args, config)

    from ..tui.app import OsceApp, ReplayRequest

    OsceApp(config, library, start=ReplayRequest(session=session, path=path)).run()
    return 0
