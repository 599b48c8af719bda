"""The unified file tool ``fs``: one action, or a batch of up to 50 in one call.

A batch names at most 20 distinct files (list, glob and grep ops are not counted). Edits that
follow each other are planned against the files as they were before them and applied from the
bottom of each file up, so an edit's line numbers never shift because of another edit above
it. Successful bodies are clipped to 2 KiB in the report; errors are shown whole. Unless
``continue_on_error`` is set, the batch stops at the first failure and says which ops ran.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from conch.tools import caps
from conch.tools.fs_ops import Files
from conch.tools.tool import Tool, make_tool

Action = Literal[
    "read", "write", "edit", "list", "glob", "grep", "mkdir", "delete", "move", "rename", "diff"
]
Positive = Annotated[int, Field(ge=1)]
NonNegative = Annotated[int, Field(ge=0)]
_NAMES_FILES = frozenset({"read", "write", "edit", "mkdir", "delete", "move", "rename", "diff"})


class FsOp(BaseModel):
    """One operation of a batch; which fields matter depends on the action."""

    model_config = ConfigDict(extra="forbid")

    action: Action
    path: str | None = None
    content: str | None = None
    old_text: str | None = None
    new_text: str | None = None
    replace_all: bool = False
    start_line: Positive | None = None
    end_line: Positive | None = None
    max_lines: Positive | None = None
    offset: NonNegative | None = None
    max_bytes: Positive | None = None
    pattern: str | None = None
    glob: str | None = None
    ignore_case: bool = False
    max_matches: Positive | None = None
    recursive: bool = False
    other: str | None = None
    destination: str | None = None
    context: Annotated[int, Field(ge=0, le=50)] = 3

    def label(self) -> str:
        return f"{self.action} {self.path or self.pattern or '.'}"


# (ok, text) per op index; ops that did not run have no entry.
Outcomes = dict[int, tuple[bool, str]]
_Span = tuple[int, int, str, int]  # start, end, replacement, op index


class Batch:
    """Runs ``fs`` calls over ``files`` (whose error prefix is ``fs ``)."""

    def __init__(self, files: Files) -> None:
        self.files = files

    def run(self, ops: list[FsOp], continue_on_error: bool = False) -> str:
        """The report of a batch: a header line naming the files, then one status per op."""
        if not ops:
            raise ValueError('fs: ops is empty; give a list like [{"action": "read", ...}]')
        if len(ops) > caps.BATCH_MAX_OPS:
            raise ValueError(
                f"fs: {len(ops)} ops in one call; at most {caps.BATCH_MAX_OPS}, "
                "so split them over several calls"
            )
        named = self._files_named(ops)
        if len(named) > caps.BATCH_MAX_FILES:
            raise ValueError(
                f"fs: the batch names {len(named)} different files; at most "
                f"{caps.BATCH_MAX_FILES} per call, so split it over several calls"
            )
        outcomes: Outcomes = {}
        stop: int | None = None
        i = 0
        while i < len(ops) and stop is None:
            if ops[i].action == "edit":
                end = i
                while end < len(ops) and ops[end].action == "edit":
                    end += 1
                stop = self._edits(ops, range(i, end), continue_on_error, outcomes)
                i = end
                continue
            try:
                outcomes[i] = (True, self.one(ops[i]))
            except Exception as exc:  # the op failed: the model reads why
                outcomes[i] = (False, str(exc))
                if not continue_on_error:
                    stop = i
            i += 1
        return self._report(ops, named, outcomes, stop)

    def one(self, op: FsOp) -> str:
        """Run one op that is not part of a batch; an edit's failure is raised."""
        if op.action == "edit":
            outcomes: Outcomes = {}
            self._edits([op], range(1), False, outcomes)
            ok, text = outcomes[0]
            if not ok:
                raise ValueError(text)
            return text
        files = self.files
        match op.action:
            case "read":
                return files.read(
                    _need(op, "path"), op.start_line, op.max_lines, op.offset, op.max_bytes
                )
            case "write":
                return files.write(_need(op, "path"), _need(op, "content"))
            case "list":
                return files.list_dir(op.path or ".", op.recursive)
            case "glob":
                return files.glob(_need(op, "pattern"), op.path or ".")
            case "grep":
                return files.grep(
                    _need(op, "pattern"), op.path or ".", op.glob, op.ignore_case, op.max_matches
                )
            case "mkdir":
                return files.mkdir(_need(op, "path"))
            case "delete":  # a pattern may come as path or as pattern
                return files.delete(op.path or _need(op, "pattern"), op.recursive)
            case "move" | "rename":  # small models say rename
                return files.move(_need(op, "path"), _need(op, "destination"))
            case "diff":
                return files.diff(_need(op, "path"), op.other, op.new_text, op.context)
        raise ValueError(f"fs: unknown action {op.action!r}")

    # -- edits -----------------------------------------------------------------------------

    def _edits(
        self, ops: list[FsOp], indices: range, continue_on_error: bool, outcomes: Outcomes
    ) -> int | None:
        """Plan consecutive edits against the files as they are now, then apply each file's
        edits bottom up and write it once. Returns the index the batch stops at, if any."""
        originals: dict[Path, str] = {}
        planned: dict[Path, list[_Span]] = {}
        stop: int | None = None
        for index in indices:
            try:
                target, spans = self._plan(ops[index], index, originals)
                for start, end, _, other in planned.get(target, []):
                    if any(s < end and start < e for s, e, _, _ in spans):
                        raise ValueError(
                            f"fs edit: this edit overlaps op {other + 1} in "
                            f"'{self.files.shown(target)}'; merge them into one edit"
                        )
                planned.setdefault(target, []).extend(spans)
            except Exception as exc:  # the op failed: the model reads why
                outcomes[index] = (False, str(exc))
                if not continue_on_error:
                    stop = index
                    break
        for target, spans in planned.items():
            text = originals[target]
            for start, end, replacement, _ in sorted(spans, reverse=True):
                text = text[:start] + replacement + text[end:]
            try:
                self.files.write_text("edit", target, text)
            except OSError as exc:
                for *_, index in spans:
                    outcomes[index] = (False, str(exc))
                if not continue_on_error:
                    first = min(index for *_, index in spans)
                    stop = first if stop is None else min(stop, first)
                continue
            for *_, index in spans:
                outcomes[index] = (True, self._edited(target, originals[target], spans, index))
        return stop

    def _plan(self, op: FsOp, index: int, originals: dict[Path, str]) -> tuple[Path, list[_Span]]:
        files = self.files
        new = _need(op, "new_text")
        target = files.edit_target(_need(op, "path"), op.old_text or "", new)
        if target not in originals:
            originals[target] = files.read_text("edit", target)
        text, shown = originals[target], files.shown(target)
        files.refuse_renaming_edit(target, text, op.old_text or "", new)
        if op.old_text is not None:
            if op.start_line is not None:
                raise ValueError("fs edit: give old_text or start_line, not both")
            starts = files.locate("edit", shown, text, op.old_text, op.replace_all, new)
            return target, [(s, s + len(op.old_text), new, index) for s in starts]
        if op.start_line is None:
            raise ValueError(
                "fs edit: give old_text (the exact text to replace) or start_line and end_line"
            )
        lines = text.splitlines(keepends=True)
        first, last = op.start_line, op.end_line or op.start_line
        if last < first or last > len(lines):
            raise ValueError(
                f"fs edit: lines {first}-{last} are not in '{shown}', which has {len(lines)} lines"
            )
        start = sum(len(line) for line in lines[: first - 1])
        end = start + sum(len(line) for line in lines[first - 1 : last])
        if new and not new.endswith("\n") and lines[last - 1].endswith("\n"):
            new += "\n"
        return target, [(start, end, new, index)]

    def _edited(self, target: Path, original: str, spans: list[_Span], index: int) -> str:
        mine = [s for s, _, _, i in spans if i == index]
        lines = ", ".join(str(original.count("\n", 0, s) + 1) for s in mine[:10])
        return f"edited '{self.files.shown(target)}' at line {lines} (line numbers before the edit)"

    # -- report ----------------------------------------------------------------------------

    def _files_named(self, ops: list[FsOp]) -> list[str]:
        named: dict[str, None] = {}
        for op in ops:
            if op.action not in _NAMES_FILES:
                continue
            for path in (op.path, op.other, op.destination):
                if path is None:
                    continue
                try:
                    named[self.files.shown(self.files.confined.resolve(path))] = None
                except ValueError:
                    named[path] = None
        return list(named)

    def _report(
        self, ops: list[FsOp], named: list[str], outcomes: Outcomes, stop: int | None
    ) -> str:
        files = f" ({', '.join(named)})" if named else ""
        out = [f"batch: {len(ops)} ops across {len(named)} files{files}"]
        for index, op in enumerate(ops):
            head = f"[{index + 1}] {op.label()}"
            if index not in outcomes:
                out.append(f"{head}: not run")
                continue
            ok, text = outcomes[index]
            if not ok:
                out.append(f"{head}: error: {text.removeprefix(f'fs {op.action}: ')}")
                continue
            hint = f'for all of it, call fs with action "{op.action}" alone'
            out.append(f"{head}: ok\n{caps.clip_note(text, caps.BATCH_BODY_CLIP, hint)}")
        if stop is not None:
            ran = [str(i + 1) for i in range(len(ops)) if i in outcomes and i != stop]
            out.append(
                f"stopped at op {stop + 1} (continue_on_error is false); ran: "
                f"{', '.join(ran) or 'none'}; ops after {stop + 1} did not run"
            )
        return "\n".join(out)


def _need(op: FsOp, field: str) -> str:
    value = getattr(op, field)
    if value is None:
        raise ValueError(f"fs {op.action}: {field} is required")
    return str(value)


def batch_tool(files: Files) -> Tool:
    """The ``fs`` tool over ``files``."""
    batch = Batch(files)

    def fs(
        action: Literal[Action, "ops"],
        ops: list[FsOp] | None = None,
        continue_on_error: bool = False,
        path: str | None = None,
        content: str | None = None,
        old_text: str | None = None,
        new_text: str | None = None,
        replace_all: bool = False,
        start_line: Positive | None = None,
        end_line: Positive | None = None,
        pattern: str | None = None,
        glob: str | None = None,
        recursive: bool = False,
        other: str | None = None,
        destination: str | None = None,
    ) -> str:
        """Work on files in the sandbox: one action, or many in one call with action "ops".
        Paths are relative to the sandbox root.

        - read: path, start_line. Lines come back as "12|text" (number, "|", the text).
        - write: path, content. Creates or replaces the whole file.
        - edit: path, old_text, new_text (exact text; replace_all for every place), or
          path, start_line, end_line, new_text (replace those lines).
        - list: path, recursive. glob: pattern like "**/*.py". grep: pattern (a regular
          expression), path, glob.
        - mkdir: path. delete: path (recursive for a directory; a pattern like "*.log"
          deletes every match). diff: path, and other or new_text. move (or rename): path, destination (rename or move; a pattern like "*.txt" with
          destination "*.md" or a directory moves every match).
        Example: {"action": "read", "path": "app.py"}

        Many at once. Example: {"action": "ops", "ops": [{"action": "edit", "path": "a.py",
        "start_line": 3, "end_line": 3, "new_text": "x = 2"}, {"action": "read", "path": "b.py"}]}
        - At most 50 ops and 20 different files per call.
        - Edits that follow each other use the line numbers the file had before them; they
          are applied bottom up, so lines added above do not shift them.
        - In a batch each result shows at most 2 KiB; read alone for the rest.
        - The batch stops at the first failed op unless continue_on_error is true; the report
          says which ops ran.
        """
        if action == "ops":
            if ops is None:
                raise ValueError('fs: action "ops" needs ops, a list of operations')
            return batch.run([FsOp.model_validate(op) for op in ops], continue_on_error)
        if ops is not None:
            raise ValueError('fs: ops is only for action "ops"')
        single = FsOp(
            action=action,
            path=path,
            content=content,
            old_text=old_text,
            new_text=new_text,
            replace_all=replace_all,
            start_line=start_line,
            end_line=end_line,
            pattern=pattern,
            glob=glob,
            recursive=recursive,
            other=other,
            destination=destination,
        )
        return batch.one(single)

    return make_tool(fs, trigger="Read, write, edit and find files; many operations in one call.")
