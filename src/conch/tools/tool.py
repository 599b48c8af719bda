"""Tools as values: a typed function the model may call, and the registry that calls it.

``@tool`` turns a function with type hints into a ``Tool``: its ``ToolSpec`` (name, the
docstring as description, the JSON schema of its parameters built by pydantic from the hints)
paired with the function. ``ToolRegistry.call`` runs a model's ``ToolCall``: arguments that
are not JSON, an unknown tool, arguments of the wrong type and a tool that raises all become a
``ToolResult`` with ``is_error`` and one line saying what went wrong, for the model to read;
nothing a model does makes it raise.
"""

from __future__ import annotations

import copy
import inspect
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, overload

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from conch.messages import ToolCall, ToolOutput, ToolResult, ToolSpec


@dataclass(frozen=True, slots=True)
class Tool:
    """A tool the model can call: what it is told (``spec``), what runs (``function``), how
    its arguments are checked (``arguments``), a short ``trigger`` (when to reach for it), an
    optional ``system`` addendum for the system prompt, and where it comes from (``origin``:
    empty for conch's own and the caller's tools, ``mcp:SERVER`` for an MCP server's)."""

    spec: ToolSpec
    function: Callable[..., Any]
    arguments: type[BaseModel]
    trigger: str = ""
    system: str = ""
    origin: str = ""

    @property
    def name(self) -> str:
        return self.spec.name

    def __call__(self, **arguments: Any) -> Any:
        return self.function(**arguments)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# The arguments model and schema of each tool function already described, by its code, its
# name as a tool and its defaults: the file tools are closures made anew for every session (and
# every request of ``conch serve``), and building a pydantic model is most of a tool's cost.
_DESCRIBED: dict[tuple[Any, ...], tuple[type[BaseModel], dict[str, Any]]] = {}
_DESCRIBED_MAX = 512


def _described(function: Callable[..., Any], name: str) -> tuple[type[BaseModel], dict[str, Any]]:
    """``function``'s arguments model and a fresh copy of its JSON schema, built once for
    each function definition (closures of one ``def`` share it)."""
    code = getattr(function, "__code__", None)
    key = None
    if code is not None:
        defaults = (
            getattr(function, "__defaults__", None),
            getattr(function, "__kwdefaults__", None),
        )
        key = (code, name, repr(defaults), repr(getattr(function, "__annotations__", None)))
    found = _DESCRIBED.get(key) if key is not None else None
    if found is None:
        model = _arguments_model(function, name)
        found = (model, _schema(model))
        if key is not None:
            if len(_DESCRIBED) >= _DESCRIBED_MAX:  # defaults whose repr differs every time
                _DESCRIBED.clear()
            _DESCRIBED[key] = found
    return found[0], copy.deepcopy(found[1])


def _arguments_model(function: Callable[..., Any], name: str) -> type[BaseModel]:
    fields: dict[str, Any] = {}
    hints = inspect.get_annotations(function, eval_str=True)
    for parameter in inspect.signature(function).parameters.values():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise TypeError(f"tool {name}: *args and **kwargs cannot be described to a model")
        if parameter.name not in hints:
            raise TypeError(f"tool {name}: parameter '{parameter.name}' needs a type hint")
        default = ... if parameter.default is parameter.empty else parameter.default
        fields[parameter.name] = (hints[parameter.name], default)
    model: type[BaseModel] = create_model(f"{name}_arguments", __base__=_Strict, **fields)
    return model


def _schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    return schema


def make_tool(
    function: Callable[..., Any],
    name: str | None = None,
    description: str | None = None,
    trigger: str = "",
    system: str = "",
) -> Tool:
    """The ``Tool`` for ``function`` (what ``@tool`` does)."""
    tool_name = name or function.__name__
    model, schema = _described(function, tool_name)
    text = description if description is not None else inspect.getdoc(function) or ""
    spec = ToolSpec(tool_name, text, schema)
    return Tool(spec, function, model, trigger, system)


@overload
def tool(function: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    trigger: str = "",
    system: str = "",
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    function: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    trigger: str = "",
    system: str = "",
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a typed function a ``Tool``: ``@tool`` or ``@tool(name=..., trigger=...)``."""
    if function is not None:
        return make_tool(function)

    def wrap(inner: Callable[..., Any]) -> Tool:
        return make_tool(inner, name, description, trigger, system)

    return wrap


class ToolRegistry:
    """The tools one surface offers the model, by name."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for item in tools:
            self.register(item)

    def register(self, item: Tool) -> None:
        """Offer ``item``; ValueError when a tool of that name is already offered."""
        if item.name in self._tools:
            raise ValueError(f"a tool named '{item.name}' is already registered")
        self._tools[item.name] = item

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def specs(self) -> list[ToolSpec]:
        """What providers are given: every tool's spec, in registration order."""
        return [item.spec for item in self._tools.values()]

    def call(self, call: ToolCall) -> ToolResult:
        """Run ``call``; whatever goes wrong comes back as an error result, never raised."""
        item = self._tools.get(call.name)
        if item is None:
            known = ", ".join(self._tools) or "none"
            return _error(call, f"no tool named '{call.name}' (tools: {known})")
        try:
            raw = json.loads(call.arguments or "{}")
        except json.JSONDecodeError as exc:
            return _error(call, f"the arguments are not JSON ({exc.msg} at {exc.pos})")
        if not isinstance(raw, dict):
            return _error(call, "the arguments must be a JSON object")
        try:
            arguments = item.arguments.model_validate(raw)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
                for e in exc.errors()
            )
            return _error(call, f"bad arguments: {problems}")
        try:
            value = item.function(**dict(arguments))
        except Exception as exc:  # the tool failed: the model reads why
            return _error(call, f"{type(exc).__name__}: {' '.join(str(exc).split())}")
        if isinstance(value, ToolOutput):
            return ToolResult(call.id, call.name, value.text, detail=value.detail)
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        return ToolResult(call.id, call.name, text)


def _error(call: ToolCall, text: str) -> ToolResult:
    return ToolResult(call.id, call.name, text, is_error=True)
