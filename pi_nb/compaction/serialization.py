"""What a summary request sees: the conversation as text, and the files it touched.

Pi does not send the old conversation to the summariser as a conversation (the model would
continue it); it *serialises* the LLM messages into labelled text (``[User]: ...``,
``[Assistant tool calls]: read(path="a.ts")``, ``[Tool result]: ...``) and wraps that in
``<conversation>`` tags. Tool results are cut to 2000 characters, since a summary needs their gist,
not their bytes. Separately, file operations are read off the assistant tool calls (``read``,
``write``, ``edit`` with a string ``path``) and appended to every summary as ``<read-files>`` /
``<modified-files>`` lists, so the next model knows which files matter even after the calls that
touched them are gone.

Port of Pi's ``core/compaction/utils.ts``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, MutableSet, Sequence
from dataclasses import dataclass, field

from pi_nb._js import js_sort_key, utf16_len
from pi_nb.compaction._types import FileListsDict, FileOperationsDict
from pi_nb.errors import CompactionError
from pi_nb.messages import AgentMessage, Message, block_text
from pi_nb.messages import format_tool_call_args as format_tool_call_args  # shared with the offline model

__all__ = [
    "SUMMARIZATION_SYSTEM_PROMPT",
    "TOOL_RESULT_MAX_CHARS",
    "FileLists",
    "FileOperations",
    "OrderedStrSet",
    "compute_file_lists",
    "content_text",
    "create_file_ops",
    "extract_file_ops_from_message",
    "format_file_operations",
    "serialize_conversation",
]

TOOL_RESULT_MAX_CHARS = 2000
"""Tool results longer than this (UTF-16 code units) are cut in the serialised conversation."""

# Pi's structure (role, the "do not continue" rules, "ONLY output the structured summary"); our words.
SUMMARIZATION_SYSTEM_PROMPT = (
    "You are a context summarization assistant working for pi_nb. You will read a conversation "
    "between a user and an AI coding assistant and write a structured summary of it, following the "
    "exact format you are given.\n"
    "\n"
    "Do NOT continue the conversation. Do NOT respond to any questions in the conversation. "
    "ONLY output the structured summary."
)


class OrderedStrSet(MutableSet[str]):
    """A set of strings that iterates in insertion order, like a JavaScript ``Set``."""

    __slots__ = ("_items",)

    def __init__(self, items: Iterable[str] = ()) -> None:
        self._items: dict[str, None] = dict.fromkeys(items)

    def __contains__(self, item: object) -> bool:
        return item in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def add(self, value: str) -> None:
        self._items[value] = None

    def discard(self, value: str) -> None:
        self._items.pop(value, None)

    def __repr__(self) -> str:
        return f"OrderedStrSet({list(self._items)!r})"


@dataclass
class FileOperations:
    """Pi's ``FileOperations {read, written, edited}``: three insertion-ordered sets of paths.

    Mutable on purpose (Pi accumulates into it while walking messages); ``to_dict()`` gives the
    arrays Pi's JSON shows.
    """

    read: OrderedStrSet = field(default_factory=OrderedStrSet)
    written: OrderedStrSet = field(default_factory=OrderedStrSet)
    edited: OrderedStrSet = field(default_factory=OrderedStrSet)

    def to_dict(self) -> FileOperationsDict:
        return {"read": list(self.read), "written": list(self.written), "edited": list(self.edited)}

    def copy(self) -> FileOperations:
        return FileOperations(
            OrderedStrSet(self.read), OrderedStrSet(self.written), OrderedStrSet(self.edited)
        )


def create_file_ops() -> FileOperations:
    """Pi's ``createFileOps()``: empty read/written/edited sets."""
    return FileOperations()


def extract_file_ops_from_message(message: AgentMessage, file_ops: FileOperations) -> None:
    """Pi's ``extractFileOpsFromMessage``: record ``read``/``write``/``edit`` calls of an assistant.

    Only tool calls whose ``arguments.path`` is a non-empty string count; other tools (``bash``,
    ``grep``...) and other roles are ignored.
    """
    if message.get("role") != "assistant":
        return
    content = message.get("content")
    if not isinstance(content, list):
        return
    for block in content:
        if not (type(block) is dict or isinstance(block, Mapping)) or block.get("type") != "toolCall":
            continue
        if "arguments" not in block or "name" not in block:
            continue
        args = block.get("arguments")
        if not (type(args) is dict or isinstance(args, Mapping)):
            continue
        path = args.get("path")
        if not isinstance(path, str) or not path:
            continue
        name = block.get("name")
        if name == "read":
            file_ops.read.add(path)
        elif name == "write":
            file_ops.written.add(path)
        elif name == "edit":
            file_ops.edited.add(path)


@dataclass(frozen=True)
class FileLists:
    """Pi's ``computeFileLists`` result: files only read, and files modified (both sorted)."""

    read_files: list[str]
    modified_files: list[str]

    def to_dict(self) -> FileListsDict:
        return {"readFiles": list(self.read_files), "modifiedFiles": list(self.modified_files)}


def compute_file_lists(file_ops: FileOperations) -> FileLists:
    """Pi's ``computeFileLists``: ``modified = edited | written``; ``read`` minus modified.

    Both lists are sorted the JavaScript way (UTF-16 code units, see :func:`js_sort_key`).
    """
    modified = OrderedStrSet([*file_ops.edited, *file_ops.written])
    read_only = sorted((f for f in file_ops.read if f not in modified), key=js_sort_key)
    return FileLists(read_files=read_only, modified_files=sorted(modified, key=js_sort_key))


def format_file_operations(read_files: Sequence[str], modified_files: Sequence[str]) -> str:
    """Pi's ``formatFileOperations``: the ``<read-files>``/``<modified-files>`` suffix of a summary.

    Returns ``""`` when both lists are empty, otherwise ``"\\n\\n"`` + the non-empty sections joined
    by a blank line. The lists are written in the order given (no sorting here).
    """
    sections: list[str] = []
    if read_files:
        sections.append("<read-files>\n" + "\n".join(read_files) + "\n</read-files>")
    if modified_files:
        sections.append("<modified-files>\n" + "\n".join(modified_files) + "\n</modified-files>")
    if not sections:
        return ""
    return "\n\n" + "\n\n".join(sections)


def content_text(content: object, separator: str = "\n") -> str:
    """pi-ai's ``contentText``: a string as is, else the text blocks joined by ``separator``."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise CompactionError(f"message content must be a string or a list of blocks, got {content!r}")
    return block_text(content, separator)


def _truncate_for_summary(text: str, max_chars: int) -> str:
    """Keep the first ``max_chars`` UTF-16 code units and say how many were cut.

    Deliberate difference from Pi: when the cut would split a surrogate pair (an emoji), the whole
    pair is dropped instead of leaving a lone surrogate, and the count includes it.
    """
    total = utf16_len(text)
    if total <= max_chars:
        return text
    if text.isascii():
        kept = text[:max_chars]
        kept_units = max_chars
    else:
        units = 0
        end = 0
        for ch in text:
            width = 2 if ord(ch) > 0xFFFF else 1
            if units + width > max_chars:
                break
            units += width
            end += 1
        kept = text[:end]
        kept_units = units
    return f"{kept}\n\n[... {total - kept_units} more characters truncated]"


def serialize_conversation(messages: Sequence[Message]) -> str:
    """Pi's ``serializeConversation`` over LLM messages (call ``convert_to_llm`` first).

    Parts, joined by a blank line: ``[User]: `` + text blocks joined with ``""`` (skipped when
    empty); for an assistant ``[Assistant thinking]: `` (thinking blocks joined by ``\\n``),
    ``[Assistant]: `` (text blocks joined by ``\\n``, present whenever a text block exists, even an
    empty one) and ``[Assistant tool calls]: name(k=<JSON>, ...); ...``; ``[Tool result]: `` + text
    joined with ``""``, cut to 2000 characters. Other roles are skipped.
    """
    parts: list[str] = []
    for msg in messages:
        role = msg.get("role")
        if role == "user":
            text = content_text(msg.get("content"), "")
            if text:
                parts.append(f"[User]: {text}")
        elif role == "assistant":
            content = msg.get("content")
            if not isinstance(content, list):
                raise CompactionError(f"assistant message content must be a list of blocks, got {content!r}")
            thinking: list[str] = []
            calls: list[str] = []
            has_text = False
            for block in content:
                if not isinstance(block, Mapping):
                    continue
                kind = block.get("type")
                if kind == "thinking":
                    value = block.get("thinking")
                    thinking.append(value if isinstance(value, str) else "")
                elif kind == "toolCall":
                    calls.append(f"{block.get('name')}({format_tool_call_args(block.get('arguments'))})")
                elif kind == "text":
                    has_text = True
            if thinking:
                parts.append("[Assistant thinking]: " + "\n".join(thinking))
            if has_text:
                parts.append("[Assistant]: " + content_text(content))
            if calls:
                parts.append("[Assistant tool calls]: " + "; ".join(calls))
        elif role == "toolResult":
            text = content_text(msg.get("content"), "")
            if text:
                parts.append(f"[Tool result]: {_truncate_for_summary(text, TOOL_RESULT_MAX_CHARS)}")
    return "\n\n".join(parts)
