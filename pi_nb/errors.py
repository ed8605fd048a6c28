"""The whole exception tree of pi_nb, in one place.

Expected outcomes (a truncated output, a session with nothing to compact, a tool that ran and
failed) are *values*; the classes below are for failures: something the caller asked for could not
be done, and retrying the same call will not help without a change.

::

    PiNbError
    ├── SessionError                      session files and the entry tree
    │   ├── InvalidSessionFileError       not a pi session (Pi's text: "Session file is not a valid pi session: {path}")
    │   │   └── SessionFileTypeError      a FIFO, directory, device or socket where a session file should be
    │   ├── SessionFileCorruptError       lines that could not be parsed (reported, never silently dropped)
    │   ├── EntryNotFoundError            "Entry {id} not found"
    │   ├── InvalidEntryError             an entry that is not an object, or a message entry without a message
    │   ├── EntryCycleError               a parentId chain that loops (Pi's walk never ends: RangeError)
    │   ├── InvalidSessionIdError         a custom session id that breaks Pi's rule
    │   ├── SessionLockedError            another process is appending to the same file
    │   └── SessionWriteError             writing the session file failed (disk full, permission); nothing half-written
    ├── TokenizerError                    a bundled tiktoken encoding is missing or fails its sha256 check
    ├── TruncationError                   bad arguments to truncate_head/tail/line, format_size, OutputAccumulator
    ├── InvalidMessageError               a message, content block or usage not shaped as Pi's types say
    ├── ResourceError                     context files, settings, skills, prompts
    │   ├── TrustStoreError               trust.json unreadable or invalid (never overwritten)
    │   ├── ProjectNotTrustedError        "Project is not trusted; refusing to write project settings"
    │   ├── SettingsFileError             settings.json unreadable, not a JSON object, or locked
    │   └── FrontmatterError              YAML frontmatter that does not parse
    ├── CompactionError                   compaction and branch summaries
    │   ├── NothingToCompactError         "Nothing to compact (session too small)" / "Already compacted"
    │   ├── SummarizationError            "{label} failed: ..." / "{label} attempted to call a tool"
    │   ├── CompactionCancelledError      "Compaction cancelled"
    │   └── ReplayError                   a what-if replay got a session or a policy it cannot simulate
    ├── ToolError                         a tool could not run (its text becomes the error tool result)
    │   ├── ToolValidationError           'Validation failed for tool "{name}": ...' (schema check of the arguments)
    │   ├── UnknownToolError              "Unknown tool name: {name}"
    │   └── OutputAccumulatorError        append after finish()/close(), or the full-output temp file failed
    ├── ProviderError                     a model provider failed outside a normal stop reason
    │   └── MissingDependencyError        an optional extra (openai, anthropic, dask) is not installed
    ├── AgentError                        misuse of the agent loop or AgentSession
    ├── InvalidValueError                 a context window, token limit, setting or thinking level out of range
    └── NotebookError                     a notebook view, frame or budget got input it cannot show
"""

from __future__ import annotations

__all__ = [
    "AgentError",
    "CompactionCancelledError",
    "CompactionError",
    "EntryCycleError",
    "EntryNotFoundError",
    "FrontmatterError",
    "InvalidEntryError",
    "InvalidMessageError",
    "InvalidSessionFileError",
    "InvalidSessionIdError",
    "InvalidValueError",
    "MissingDependencyError",
    "NotebookError",
    "NothingToCompactError",
    "OutputAccumulatorError",
    "PiNbError",
    "ProjectNotTrustedError",
    "ProviderError",
    "ReplayError",
    "ResourceError",
    "SessionError",
    "SessionFileCorruptError",
    "SessionFileTypeError",
    "SessionLockedError",
    "SessionWriteError",
    "SettingsFileError",
    "SettingsFileWarning",
    "SummarizationError",
    "TokenizerError",
    "ToolError",
    "ToolValidationError",
    "TruncationError",
    "TrustStoreError",
    "UnknownToolError",
]


class PiNbError(Exception):
    """Base class of every error pi_nb raises on purpose."""


class SessionError(PiNbError):
    """A session file or the entry tree could not be used as asked."""


class InvalidSessionFileError(SessionError):
    """The file is not a pi session (its first object is not a header with a string id)."""


class SessionFileCorruptError(SessionError):
    """Some lines of a session file could not be parsed; ``problems`` lists (line number, reason)."""

    def __init__(self, message: str, problems: list[tuple[int, str]] | None = None) -> None:
        super().__init__(message)
        self.problems: list[tuple[int, str]] = list(problems or [])


class EntryNotFoundError(SessionError, KeyError):
    """``Entry {id} not found``: an id that is not in the session."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class InvalidEntryError(SessionError, ValueError):
    """A session entry Pi cannot read: not an object, or a ``message`` entry whose message is missing."""


class EntryCycleError(SessionError, ValueError):
    """An entry's ``parentId`` chain loops back on itself (a self-parenting entry or a cycle).

    Pi's root walk (``buildSessionPath``) never terminates on such a tree and dies with
    ``RangeError: Invalid array length``; pi_nb stops and names the entry instead (and, when the
    session came from a file, the file and the line numbers: ``path`` and ``lines``).
    """

    def __init__(self, message: str, path: str | None = None, lines: tuple[int, ...] = ()) -> None:
        super().__init__(message)
        self.path = path
        self.lines = tuple(lines)


class InvalidSessionIdError(SessionError, ValueError):
    """A custom session id that is empty or uses characters Pi does not allow."""


class SessionLockedError(SessionError):
    """Another process holds the append lock of this session file."""


class SessionFileTypeError(InvalidSessionFileError):
    """The session path is not a regular file: a FIFO, a directory, a device or a socket (directly
    or through a symlink). Refused before anything is read, so nothing blocks or fills memory, and
    the special file is never replaced. ``path`` is the path given, ``kind`` what it is."""

    def __init__(self, message: str, path: str = "", kind: str = "") -> None:
        super().__init__(message)
        self.path = path
        self.kind = kind


class SessionWriteError(SessionError, OSError):
    """Writing to the session file failed (permission denied, disk full, file too large).

    The entry that was being written is neither in the file (a partial line is cut back off) nor
    in the session in memory, so the two still agree. ``path`` is the file; ``errno`` and
    ``__cause__`` are the operating system's error.
    """

    def __init__(self, message: str, path: str = "", errno_: int | None = None) -> None:
        OSError.__init__(self, message)
        self.path = path
        self.errno = errno_

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class TokenizerError(PiNbError):
    """A bundled tiktoken encoding is missing, unreadable or fails its sha256 check."""


class TruncationError(PiNbError, ValueError):
    """A truncation helper got an argument of the wrong type, or one Pi itself throws on."""


class InvalidMessageError(PiNbError, ValueError):
    """A message, content block or usage object that does not have the shape Pi's types describe.

    Raised where Pi itself would throw (``null`` content, a tool call without ``arguments``) or
    would compute ``NaN`` (a usage without ``input``); the message names the role and the field.
    """


class ResourceError(PiNbError):
    """A context file, setting, skill or prompt template could not be loaded."""


class TrustStoreError(ResourceError):
    """trust.json could not be read or is invalid; the file is left untouched."""


class ProjectNotTrustedError(ResourceError):
    """A write to project settings of an untrusted project."""


class SettingsFileError(ResourceError):
    """A settings.json could not be read, parsed or locked; the manager keeps it for
    ``drain_errors()`` and leaves the file untouched."""


class SettingsFileWarning(UserWarning):
    """A settings.json that could not be read or parsed when a session started (Pi prints the
    same warning at startup): ``Invalid settings file <path>: <error>``. Its scope reads as ``{}``."""


class FrontmatterError(ResourceError, ValueError):
    """YAML frontmatter that does not parse; the message carries the parser's position."""


class CompactionError(PiNbError):
    """Compaction or a branch summary could not be produced."""


class NothingToCompactError(CompactionError):
    """The path has nothing to summarise, or already ends with a compaction."""


class SummarizationError(CompactionError):
    """The summarising model stopped with an error, hit its token cap, or called a tool."""


class CompactionCancelledError(CompactionError):
    """A hook or the user cancelled the compaction."""


class ReplayError(CompactionError, ValueError):
    """A what-if replay (:mod:`pi_nb.what_if`) got a session or a policy it cannot simulate."""


class ToolError(PiNbError):
    """A tool could not run; the message becomes the text of an error tool result."""


class ToolValidationError(ToolError, ValueError):
    """The tool-call arguments failed the tool's JSON schema; the message is pi-ai's exact text."""


class UnknownToolError(ToolError, KeyError):
    """``Unknown tool name: {name}``: no built-in tool has that name."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class OutputAccumulatorError(ToolError):
    """An OutputAccumulator was appended to after finish()/close(), or its temp file could not be written."""


class ProviderError(PiNbError):
    """A model provider failed outside a normal stop reason."""


class MissingDependencyError(ProviderError, ImportError):
    """An optional extra is needed: the message says which ``pip install`` fixes it."""


class AgentError(PiNbError):
    """The agent loop or AgentSession was used in a way it does not allow."""


class InvalidValueError(PiNbError, ValueError):
    """A value refused where it enters: ``context_window <= 0``, ``max_tokens <= 0``,
    ``reserveTokens < 0`` or not below the context window, ``keepRecentTokens < 0``, a thinking
    level outside Pi's set. The message names the value, what was given and what is allowed."""


class NotebookError(PiNbError, ValueError):
    """A notebook view, frame, plot or token budget got input it cannot show (a bad limit, a
    system-prompt part that is not in the system prompt, a source that is not a session)."""
