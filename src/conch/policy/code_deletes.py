"""Interpreter code that deletes a tree through its language's library, aimed at a path the
denylist guards: ``shutil.rmtree``, ``FileUtils.rm_rf``, ``fs.rmSync(..., {recursive})``,
``os.RemoveAll``, ``remove_dir_all``, ``rm(..., recursive=true)`` and their kin, given ``/``,
a system directory or the home directory (a literal, or the language's way of naming home).

The shell-level denylist sees ``python3 -c CODE`` as one program with a string; this reads the
string for the library calls every scripting language has for deleting a directory tree, so
the class is refused, not each spelling. Text handling only: nothing is executed.
"""

from __future__ import annotations

import re

from conch.policy.targets import catastrophic_path, critical_file

# Library calls that delete a whole tree. ``rm(`` / ``remove(`` only count with a recursive
# flag in the call (Julia's ``rm(path, recursive=true)``, Node's ``fs.rm(p, {recursive})``).
_TREE_DELETERS = re.compile(
    r"\b(?:rmtree|rm_rf|rm_r|remove_entry_secure|remove_dir_all|RemoveAll|rmSync|rmdirSync"
    r"|removeSync|emptyDirSync|remove_tree|deleteRecursively|delete_tree|rimraf|rmdir_p"
    r"|rmdir|rm|remove|unlink|delete)\s*\(",
)
_NEEDS_RECURSIVE = frozenset({"rm", "remove", "rmdir", "unlink", "delete"})
_RECURSIVE = re.compile(r"recursive|recurse|-r\b|:rf|force\s*[:=]", re.IGNORECASE)
# A string literal inside the call's arguments.
_LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"|\'((?:[^\'\\]|\\.)*)\'')
# The ways languages name the home directory.
_HOME = re.compile(
    r"expanduser\(\s*['\"]~['\"]\s*\)|Path\.home\(\)|homedir\(\)|Dir\.home|getenv\(\s*['\"]HOME"
    r"|ENV\[\s*['\"]HOME|environ\[\s*['\"]HOME|environ\.get\(\s*['\"]HOME|\$ENV\{\s*HOME"
    r"|env\.HOME|UserHomeDir\(\)|home_dir\(\)|user\.home|System\.getProperty\(\s*['\"]user\.home",
)


def _call_arguments(code: str, start: int) -> str:
    """The text of a call's arguments, from just after ``(`` to its matching ``)`` (or the
    end of the code)."""
    depth = 1
    for i in range(start, len(code)):
        char = code[i]
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return code[start:i]
    return code[start:]


def deletes_guarded_tree(code: str) -> str | None:
    """The library call of ``code`` that deletes ``/``, a system directory or the home
    directory, as a short text; None when there is none."""
    for match in _TREE_DELETERS.finditer(code):
        name = match.group(0).rstrip("( \t")
        arguments = _call_arguments(code, match.end())
        if name in _NEEDS_RECURSIVE and not _RECURSIVE.search(arguments):
            continue
        if _HOME.search(arguments):
            return f"{name}(...) of the home directory"
        for literal in _LITERAL.finditer(arguments):
            text = next(g for g in literal.groups() if g is not None)
            if text and catastrophic_path(text):
                return f"{name}({text!r})"
    return None


# Library calls that overwrite, truncate, delete or move the file they name (``open`` counts
# only with a mode that writes); Lisp's ``(delete-file "...")`` and Perl's ``unlink LIST``.
_FILE_CHANGERS = re.compile(
    r"\b(?:open|write_text|write_bytes|writeFileSync|writeFile|appendFileSync|truncate"
    r"|truncateSync|unlink|unlinkSync|remove|removeSync|rename|renameSync|replace|move"
    r"|copyfile|copy|rmSync|delete|File\.write|IO\.write|file_put_contents|fopen)\s*\("
    r"|\((?:delete-file|delete-directory|write-region|rename-file|copy-file)\s"
    r"|\bunlink\s+(?:glob\s*)?(?=[\"'])",
)
_WRITE_MODE = re.compile(r"""['"][rwaxbt+]*[wax+][rwaxbt+]*['"]""")


def changes_critical_file(code: str) -> str | None:
    """The library call of ``code`` that overwrites, deletes or moves an account, sudo or
    boot file (``open('/etc/shadow', 'w')``, ``Path('/etc/passwd').write_text('')``,
    ``(delete-file "/etc/passwd")``, ``unlink glob "/etc/*"``), as a short text; or None."""
    for match in _FILE_CHANGERS.finditer(code):
        name = match.group(0).strip("( \t")
        arguments = _call_arguments(code, match.end()) if match.group(0).endswith("(") else ""
        # The path may come before the call (``Path('/etc/passwd').write_text(...)``).
        window = code[max(0, match.start() - 80) : match.start()] + arguments
        if not arguments:
            window = code[match.end() : match.end() + 120]
        if name in ("open", "fopen") and not _WRITE_MODE.search(arguments):
            continue
        for literal in _LITERAL.finditer(window):
            text = next(g for g in literal.groups() if g is not None)
            if text and (critical_file(text) or (name == "unlink" and catastrophic_path(text))):
                return f"{name}(...) of {text!r}"
    return None
