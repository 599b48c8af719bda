"""A pipeline whose last stages throw away what the request asks for, shortened.

A small model often writes a good pipeline and then one stage too many: ``... | uniq -c |
sort -rn | awk '{print $2}'`` for "how often does each address appear" prints the addresses
without their counts. When the dry run shows output that does not fit the request
(``conch.command.judge.mismatch``), the same pipeline without its last stages is tried too,
longest first: a dry run each, no model call.
"""

from __future__ import annotations

from conch.policy.parse import ParseFailure, parse_tree

__all__ = ["MAX_SHORTENED", "shortened"]

MAX_SHORTENED = 3  # the most shorter pipelines tried for one command


def shortened(command: str) -> list[str]:
    """``command``'s pipeline without its last stage, then without its last two, ... (at
    least one stage left, at most ``MAX_SHORTENED``); empty when ``command`` is not one plain
    pipeline (a list, a loop, a redirection of the whole, an error in parsing)."""
    try:
        root = parse_tree(command)
    except ParseFailure:
        return []
    if root.has_error or root.named_child_count != 1:
        return []
    pipeline = root.named_children[0]
    if pipeline.type != "pipeline":
        return []
    stages = [child for child in pipeline.named_children if child.type == "command"]
    if len(stages) != pipeline.named_child_count or len(stages) < 2:
        return []
    source = command.encode("utf-8")
    found: list[str] = []
    for stage in reversed(stages[:-1]):
        found.append(source[pipeline.start_byte : stage.end_byte].decode("utf-8"))
        if len(found) == MAX_SHORTENED:
            break
    return found
