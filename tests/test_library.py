"""Loading cases and rubrics: good files, broken files with file/line/field."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from osce_tui.library import FileLoadError, Library, NotFoundError, load_case, validate_paths
from osce_tui.tomlpos import index_lines, line_of

from .conftest import FIXTURES, ROOT

MINI = FIXTURES / "cases" / "mini-sore-throat.toml"


def test_loads_small_case_with_id_from_file_name():
    case = load_case(MINI)
    assert case.id == "mini-sore-throat"
    assert case.doorway.vitals.temperature_c == 38.4
    assert [f.id for f in case.history] == ["onset", "fever", "cough"]
    assert case.content_hash().startswith("sha256:")
    # A small case is valid but not complete for the protocols.
    assert any("25+" in gap for gap in case.protocol_gaps())


def _broken_copy(tmp_path: Path, old: str, new: str, name: str = "broken.toml") -> Path:
    text = MINI.read_text().replace(old, new, 1)
    assert text != MINI.read_text(), "replacement did not apply"
    path = tmp_path / name
    path.write_text(text)
    return path


def test_wrong_type_names_file_line_and_field(tmp_path):
    path = _broken_copy(tmp_path, "heart_rate = 96", 'heart_rate = "fast"')
    with pytest.raises(FileLoadError) as err:
        load_case(path)
    issue = err.value.issues[0]
    assert issue.path == path
    assert issue.field == "doorway.vitals.heart_rate"
    expected_line = MINI.read_text().splitlines().index("heart_rate = 96") + 1
    assert issue.line == expected_line
    assert f"broken.toml:{expected_line}: doorway.vitals.heart_rate" in str(err.value)


def test_error_inside_array_of_tables_points_at_that_entry(tmp_path):
    # Second [[history]] loses a paraphrase: needs at least 2.
    path = _broken_copy(
        tmp_path,
        'paraphrases = ["Have you felt hot or had a temperature?", "Any chills or sweats?"]',
        'paraphrases = ["Have you felt hot?"]',
    )
    with pytest.raises(FileLoadError) as err:
        load_case(path)
    issue = err.value.issues[0]
    assert issue.field == "history[1].paraphrases"
    lines = path.read_text().splitlines()
    assert lines[issue.line - 1].startswith("paraphrases = [\"Have you felt hot?\"]")


def test_unknown_field_is_reported_as_typo(tmp_path):
    path = _broken_copy(tmp_path, 'affect = "tired, hoarse"', 'afect = "tired, hoarse"')
    with pytest.raises(FileLoadError) as err:
        load_case(path)
    messages = {i.field: i.message for i in err.value.issues}
    assert "unknown field" in messages["persona.afect"]
    assert "required field is missing" in messages["persona.affect"]


def test_toml_syntax_error_reports_line(tmp_path):
    path = _broken_copy(tmp_path, 'title = "Sore throat in a young adult"', 'title = "unterminated')
    with pytest.raises(FileLoadError) as err:
        load_case(path)
    assert err.value.issues[0].line == 2
    assert "TOML syntax error" in str(err.value)


def test_broken_file_does_not_stop_the_others(tmp_path):
    shutil.copy(MINI, tmp_path / "good.toml")
    _broken_copy(tmp_path, "age = 21", "age = -4")
    lib = Library(case_dirs=[tmp_path], include_bundled=False)
    assert list(lib.cases()) == ["good"]
    assert [i.field for i in lib.case_issues()] == ["doorway.age"]
    with pytest.raises(FileLoadError):
        lib.case("broken")
    with pytest.raises(NotFoundError, match="Did you mean: good"):
        lib.case("goood")


def test_cases_dir_wins_over_bundled(tmp_path):
    shutil.copy(MINI, tmp_path / "chest-pain-46m.toml")
    lib = Library(case_dirs=[tmp_path])
    assert lib.case("chest-pain-46m").title == "Sore throat in a young adult"


def test_select_by_ids_and_specialty(tmp_path):
    shutil.copy(MINI, tmp_path / "a.toml")
    shutil.copy(MINI, tmp_path / "b.toml")
    lib = Library(case_dirs=[tmp_path], include_bundled=False)
    assert [c.id for c in lib.select("all")] == ["a", "b"]
    assert [c.id for c in lib.select("b")] == ["b"]
    assert [c.id for c in lib.select("ENT")] == ["a", "b"]
    with pytest.raises(NotFoundError):
        lib.select("a,zzz")


def test_validate_paths_strict_reports_gaps():
    assert validate_paths([MINI]) == []
    gaps = validate_paths([MINI], strict=True)
    assert any("differential" in i.message for i in gaps)


def test_tomlpos_handles_nested_arrays_and_multiline_strings():
    text = '\n'.join(
        [
            "title = 'x'",  # 1
            'notes = """',  # 2
            "[not_a_table]",  # 3 (inside a string)
            '"""',  # 4
            "[[sections]]",  # 5
            "id = 'a'",  # 6
            "[[sections.criteria]]",  # 7
            "id = 'c1'",  # 8
            "[[sections.criteria]]",  # 9
            "id = 'c2'",  # 10
            "points = [",  # 11
            "  1, 2,",  # 12
            "]",  # 13
            "[[sections]]",  # 14
            "id = 'b'",  # 15
        ]
    )
    pos = index_lines(text)
    assert ("not_a_table",) not in pos
    assert pos[("sections", 0, "criteria", 1, "id")] == 10
    assert pos[("sections", 1, "id")] == 15
    assert line_of(text, ("sections", 0, "criteria", 1, "points", 0)) == 11
    assert line_of(text, ("sections", 0, "criteria", 0, "missing_field")) == 7


def test_bundled_folders_found_from_clone():
    from osce_tui.library import bundled_cases_dir, bundled_rubrics_dir

    assert bundled_cases_dir() in (ROOT / "cases", Path(__import__("osce_tui").__file__).parent / "_bundled" / "cases")
    assert bundled_rubrics_dir().name == "rubrics"
