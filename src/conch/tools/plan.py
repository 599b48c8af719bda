"""The ``plan`` tool: a task list the model keeps while it works, and the state behind it.

``PlanState`` holds the items so a front end can render a checklist (``items``, ``render``,
or an ``on_change`` callback); the tool adds, updates, lists and clears them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from conch.tools.tool import Tool, make_tool

Status = Literal["pending", "in_progress", "done", "blocked"]
MAX_ITEMS = 50
MAX_TITLE = 200
_MARKS: dict[str, str] = {"pending": " ", "in_progress": ">", "done": "x", "blocked": "!"}


@dataclass(frozen=True, slots=True)
class PlanItem:
    """One task: its number, what it is, how far it got, and an optional note (why blocked)."""

    id: int
    title: str
    status: Status = "pending"
    note: str = ""


class PlanState:
    """The task list of one session. Safe to read from another thread while the agent
    changes it; ``on_change`` is called with the new items after every change."""

    def __init__(self, on_change: Callable[[tuple[PlanItem, ...]], None] | None = None) -> None:
        self._items: list[PlanItem] = []
        self._next_id = 1
        self._lock = threading.Lock()
        self._on_change = on_change

    @property
    def items(self) -> tuple[PlanItem, ...]:
        """The tasks, in order."""
        with self._lock:
            return tuple(self._items)

    def add(self, titles: Sequence[str]) -> list[PlanItem]:
        """Append tasks (pending); ValueError when a title is empty or the list would pass
        its cap."""
        cleaned = [" ".join(t.split())[:MAX_TITLE] for t in titles]
        if not cleaned or any(not t for t in cleaned):
            raise ValueError("plan: give tasks, a list of short non-empty titles")
        with self._lock:
            if len(self._items) + len(cleaned) > MAX_ITEMS:
                raise ValueError(
                    f"plan: at most {MAX_ITEMS} tasks; the plan has {len(self._items)}"
                )
            added = []
            for title in cleaned:
                added.append(PlanItem(self._next_id, title))
                self._next_id += 1
            self._items.extend(added)
        self._changed()
        return added

    def update(
        self,
        item_id: int,
        status: Status | None = None,
        title: str | None = None,
        note: str | None = None,
    ) -> PlanItem:
        """Change a task's status, title or note; ValueError for an unknown id."""
        with self._lock:
            for index, item in enumerate(self._items):
                if item.id == item_id:
                    changed = replace(
                        item,
                        status=status or item.status,
                        title=" ".join(title.split())[:MAX_TITLE] if title else item.title,
                        note=" ".join(note.split())[:MAX_TITLE] if note is not None else item.note,
                    )
                    self._items[index] = changed
                    break
            else:
                known = ", ".join(str(i.id) for i in self._items) or "none"
                raise ValueError(f"plan: no task {item_id} (tasks: {known})")
        self._changed()
        return changed

    def clear(self) -> None:
        """Remove every task and start numbering from 1 again."""
        with self._lock:
            self._items.clear()
            self._next_id = 1
        self._changed()

    def render(self) -> str:
        """The checklist as text: ``[x] 1. title`` per task under a ``done`` count."""
        items = self.items
        if not items:
            return (
                'the plan is empty; add tasks with {"action": "add", "tasks": '
                '["first step", "second step"]}'
            )
        done = sum(item.status == "done" for item in items)
        lines = [f"plan: {done} of {len(items)} done"]
        for item in items:
            note = f" ({item.status}: {item.note})" if item.note else ""
            lines.append(f"[{_MARKS[item.status]}] {item.id}. {item.title}{note}")
        return "\n".join(lines)

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change(self.items)


def plan_tool(state: PlanState) -> Tool:
    """The ``plan`` tool over ``state``."""

    def plan(
        action: Literal["add", "update", "list", "clear"],
        tasks: list[str] | None = None,
        id: int | None = None,
        status: Status | None = None,
        title: str | None = None,
        note: str | None = None,
    ) -> str:
        """Keep a task list for work with several steps. Every call returns the whole list:
        [ ] pending, [>] in_progress, [x] done, [!] blocked.

        - add: {"action": "add", "tasks": ["Read the config", "Fix the bug", "Run the tests"]}
        - update: {"action": "update", "id": 2, "status": "done"} (status is pending,
          in_progress, done or blocked; add a note to say why a task is blocked)
        - list: {"action": "list"}
        - clear: {"action": "clear"} removes every task.
        Mark a task in_progress when you start it and done when it is finished.
        """
        if action == "add":
            state.add(tasks or [])
        elif action == "update":
            if id is None:
                raise ValueError('plan: update needs id, the task number, like {"id": 2}')
            if status is None and title is None and note is None:
                raise ValueError('plan: update needs a status, like {"status": "done"}')
            state.update(id, status, title, note)
        elif action == "clear":
            state.clear()
        return state.render()

    return make_tool(
        plan,
        trigger="Keep a checklist of steps for a task with several steps.",
        system=(
            "For a task with several steps, first write the steps with the plan tool, then "
            "mark each one in_progress and done as you work through them."
        ),
    )
