"""Extraction of one command from whatever the model wrapped it in."""

from __future__ import annotations

import pytest

from conch.errors import ModelOutputError
from conch.validate.extract import extract_command


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
