"""A line format the request gives in quotes, its placeholders in capitals explained
elsewhere in the request ("NAME COUNT" ... where NAME is): a file the request names that the
command wrote must hold only lines of that form, or the command does not fit."""

from __future__ import annotations

import pytest

from conch.command.judge import line_form, written_mismatch

GREETING = (
    'Create a file greeting.txt containing one line, "Hello, NAME!", where NAME is the name '
    "written in name.txt."
)
COUNTS = (
    'For each .txt file in texts, write a line "NAME COUNT" to counts.txt, where NAME is the '
    "file name and COUNT its number of words."
)
INDEX = (
    'Create docs/INDEX.md with one line per Markdown file, each in the form "- [TITLE](FILE)", '
    "where FILE is the file's name and TITLE the text of its first heading."
)


def _judged(request: str, path: str, text: str) -> str | None:
    return written_mismatch(request, "cmd", (f"created {path}",), ((path, text.encode()),))


@pytest.mark.parametrize(
    ("request_", "path", "text", "wrong"),
    [
        (GREETING, "greeting.txt", "Hello,  Ada\n", "'Hello,  Ada'"),
        (GREETING, "greeting.txt", "Hello, Ada!\n", None),
        (COUNTS, "counts.txt", "2\n3\n", "'2'"),
        (COUNTS, "counts.txt", "a.txt 2\nb.txt  3\n", None),
        (INDEX, "docs/INDEX.md", "- Intro\n", "'- Intro'"),
        (INDEX, "docs/INDEX.md", "- [Intro](a.md)\n- [Usage](b.md)\n", None),
    ],
)
def test_lines_are_held_to_the_form_the_request_gives(
    request_: str, path: str, text: str, wrong: str | None
) -> None:
    found = _judged(request_, path, text)
    if wrong is None:
        assert found is None
    else:
        assert found is not None and f"holds the line {wrong}, not of the form" in found


def test_a_quoted_literal_in_capitals_is_no_form() -> None:
    assert line_form('write the lines with "ERROR" in app.log to errors.txt') is None
    assert line_form("write NAME to out.txt") is None  # nothing quoted
    assert line_form('write "NAME COUNT" to out.txt') is None  # NAME explained nowhere


def test_a_file_the_request_does_not_name_is_not_held_to_the_form() -> None:
    assert _judged(COUNTS, "other.txt", "2\n") is None


@pytest.mark.parametrize(
    ("request_", "changes", "wrong"),
    [
        (
            "Rename the files in reports so that their names are all lower case.",
            ("deleted reports/Data.CSV", "created reports/Data.CSV.txt"),
            "created reports/Data.CSV.txt, whose name is not in lower case",
        ),
        (
            "Rename the files in reports so that their names are all lower case.",
            ("deleted reports/Data.CSV", "created reports/data.csv"),
            None,
        ),
        (
            "make every file name in src uppercase",
            ("deleted src/a.c", "created src/a.C"),
            "created src/a.C, whose name is not in uppercase",
        ),
        ("convert the text of notes.txt to lower case", ("changed notes.txt",), None),
        (
            "Rename the files in reports so that their names are all lower case.",
            ("deleted reports/Summary.TXT", "created reports/summary.txt.txt"),
            "created reports/summary.txt.txt, which is not the name of a file it renamed, "
            "in lower case",
        ),
    ],
)
def test_names_asked_for_in_a_case_are_held_to_it(
    request_: str, changes: tuple[str, ...], wrong: str | None
) -> None:
    assert written_mismatch(request_, "cmd", changes, ()) == wrong


@pytest.mark.parametrize(
    ("path", "text", "wrong"),
    [
        ("people.csv", 'name,age\n{ , \n"name": , "Ann",\n', "its line 3 has 3"),
        ("people.csv", 'name,age\nAnn,31\n"Bob, Jr",27\n', None),  # a quoted comma
        ("one.csv", "name\nAnn\nBob\n", None),
        ("config.json", '{"a": 1}\n{"b": 2}\n', "config.json is not JSON"),
        ("config.json", '{"HOST": "example.org"}\n', None),
        ("notes.txt", "a,b\nc\n", None),  # no shape asked of a text file
    ],
)
def test_a_csv_or_json_file_must_have_its_kind_s_shape(
    path: str, text: str, wrong: str | None
) -> None:
    found = _judged(f"create {path} from the data", path, text)
    assert (found is None) if wrong is None else (found is not None and wrong in found)


def test_only_whole_lines_of_a_long_csv_are_judged() -> None:
    from conch.execute.scratch import WRITTEN_BYTES

    rows = "".join(f"n{i},{i}\n" for i in range(2000))
    cut = rows.encode()[:WRITTEN_BYTES]  # the last line is cut in the middle
    found = written_mismatch("make big.csv", "cmd", ("created big.csv",), (("big.csv", cut),))
    assert found is None


def test_a_file_asked_for_in_a_form_left_empty_does_not_fit() -> None:
    found = _judged(GREETING, "greeting.txt", "")
    assert found is not None and "greeting.txt is empty" in found
    assert _judged("write the names of the empty files to empty.txt", "empty.txt", "") is None


def test_names_asked_for_without_their_directory_hold_no_path() -> None:
    asked = "write the names of the copies in data to dups.txt, names only, without the directory"
    found = _judged(asked, "dups.txt", "data/a.txt\ndata/b.txt\n")
    assert found is not None and "'data/a.txt', with its directory" in found
    assert _judged(asked, "dups.txt", "a.txt\nb.txt\n") is None
    assert _judged("write the paths of the copies to dups.txt", "dups.txt", "data/a.txt\n") is None
