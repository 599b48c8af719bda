"""Extraction of one command from whatever the model wrapped it in."""

from __future__ import annotations

import pytest

from conch.errors import ModelOutputError
from conch.validate.extract import extract_command, fence_lang, fence_opening, fences


@pytest.mark.parametrize(
    ("reply", "command"),
    [
        ("ls -la", "ls -la"),
        ("  ls -la  \n", "ls -la"),
        ("`ls -la`", "ls -la"),
        ("```bash\nfind . -name '*.py'\n```", "find . -name '*.py'"),
        ("```\ndu -sh *\n```", "du -sh *"),
        ("```sh\n# list\nls\n```", "ls"),
        ("```bash\ntar -czf a.tgz \\\n  dir\n```", "tar -czf a.tgz dir"),
        ("Here is the command:\n```bash\ngrep -r foo .\n```\nIt searches.", "grep -r foo ."),
        ("CMD: wc -l file.txt", "wc -l file.txt"),
        ("Some thoughts\nCMD: date", "date"),
        ("To list files, use `ls -la`.", "ls -la"),
        ("$ df -h", "df -h"),
        ("You can run this:\n\nls -lS", "ls -lS"),
        ("```bash\nls\n```\n```python\nprint(1)\n```", "ls"),
        ("top -b \u2013n 1", "top -b -n 1"),
        ("ls \u2014all", "ls --all"),
        ("sort \u2212r names.txt", "sort -r names.txt"),
        ('echo "a \u2013 b"', 'echo "a \u2013 b"'),
        ("echo pre\u2013post", "echo pre\u2013post"),
    ],
)
def test_command_is_extracted_from_common_wrappings(reply: str, command: str) -> None:
    assert extract_command(reply) == command


@pytest.mark.parametrize("reply", ["", "   ", "\n\n"])
def test_empty_reply_is_an_error(reply: str) -> None:
    with pytest.raises(ModelOutputError, match="empty reply"):
        extract_command(reply)


def test_prose_without_a_command_is_an_error() -> None:
    with pytest.raises(ModelOutputError, match="no command"):
        extract_command("Sure, I can help with that.\nHere is what you should consider doing.")


def test_one_fence_parser_pairs_labelled_blocks() -> None:
    text = (
        "```python src/app.py\nprint(1)\n```\n"
        "then\n"
        "````markdown notes.md\n```sh\nls\n```\n````\n"
        "```bash title=run.sh\npython src/app.py\n```"
    )
    found = fences(text)
    assert [(f.label, f.lang, f.closed) for f in found] == [
        ("python src/app.py", "python", True),
        ("markdown notes.md", "markdown", True),
        ("bash title=run.sh", "bash", True),
    ]
    assert found[0].body == "print(1)\n" and found[1].body == "```sh\nls\n```\n"
    assert text[slice(*found[2].body_span)] == "python src/app.py\n"
    assert fence_lang("python:src/app.py") == "python" and fence_lang("") == ""
    # A block cut short runs to the end, and says so.
    (cut,) = fences("```sh\nls -l")
    assert cut.body == "ls -l" and not cut.closed
    # A reply whose first block is labelled with a path still gives its shell command.
    assert extract_command(text.split("then\n")[0] + "```sh\nuptime\n```") == "uptime"


def test_a_fence_line_opens_and_only_its_own_ticks_close() -> None:
    opening = fence_opening("  ```python src/app.py")
    assert opening is not None and opening.label == "python src/app.py"
    assert opening.closed_by("```") and opening.closed_by("  ```` ")
    assert not opening.closed_by("```python") and not opening.closed_by("x = 1")
    longer = fence_opening("````")
    assert longer is not None and longer.label == "" and not longer.closed_by("```")
    assert fence_opening("not a fence") is None and fence_opening("```sh```") is None
