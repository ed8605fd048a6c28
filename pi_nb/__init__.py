"""pi_nb: the context engineering of the Pi coding agent (0.85.0), in Python and in Jupyter.

``import pi_nb`` loads the engine only: it never imports IPython, ipywidgets, pandas, matplotlib or
a provider SDK. The notebook toolkit is loaded by ``%load_ext pi_nb`` (or ``import pi_nb.notebook``).

What this top level exports is a promise, so it is declared once, by hand, and kept small: the map
``_EXPORTS`` below (name -> the module it comes from). ``__all__`` is derived from it, and a name is
imported from its module the first time it is used (:pep:`562`), so ``import pi_nb`` loads only this
file; ``dir(pi_nb)`` lists every name. The map holds:

* every function, class and constant that mirrors one Pi 0.85.0 exports, under its snake_case name
  (``truncateHead`` is :func:`truncate_head`, ``buildSessionContext`` is :func:`build_session_context`);
* what a user reaches for: sessions (:class:`SessionManager`, :class:`AgentSession`), the agent, the
  models and providers, the tools, the what-if replay, and every error class.

Helpers and internals stay in their subpackages (``pi_nb.session.ids.generate_id``, ...). Names that
were exported here before 0.2 and are internal now still resolve, with a :class:`DeprecationWarning`
that says where they live (``_MOVED`` below); they leave the top level in 0.3.

JavaScript's ``undefined`` (an argument left out) and ``null`` (``None``) differ in a few Pi functions;
where pi_nb keeps the distinction, the sentinel is :data:`UNDEFINED` (see its docstring).
"""

import importlib as _importlib
import warnings as _warnings

TYPE_CHECKING = False  # typing is not imported at run time: it alone would double the import's cost
if TYPE_CHECKING:
    from typing import Any as _Any
del TYPE_CHECKING

__version__ = "0.1.0"

# The public surface, declared once: each exported name -> the pi_nb module it is imported from
# (grouped by module, in the order of the boundaries). Keep each group sorted.
_EXPORTS: dict[str, str] = {
    # pi_nb.undefined
    "NO_LEAF": "undefined",
    "NoLeaf": "undefined",
    "UNDEFINED": "undefined",
    "Undefined": "undefined",
    # pi_nb.errors
    "AgentError": "errors",
    "CompactionCancelledError": "errors",
    "CompactionError": "errors",
    "EntryCycleError": "errors",
    "EntryNotFoundError": "errors",
    "FrontmatterError": "errors",
    "InvalidEntryError": "errors",
    "InvalidMessageError": "errors",
    "InvalidSessionFileError": "errors",
    "InvalidSessionIdError": "errors",
    "InvalidValueError": "errors",
    "MissingDependencyError": "errors",
    "NotebookError": "errors",
    "NothingToCompactError": "errors",
    "OutputAccumulatorError": "errors",
    "PiNbError": "errors",
    "ProjectNotTrustedError": "errors",
    "ProviderError": "errors",
    "ReplayError": "errors",
    "ResourceError": "errors",
    "SessionError": "errors",
    "SessionFileCorruptError": "errors",
    "SessionFileTypeError": "errors",
    "SessionLockedError": "errors",
    "SessionWriteError": "errors",
    "SettingsFileError": "errors",
    "SettingsFileWarning": "errors",
    "SummarizationError": "errors",
    "TokenizerError": "errors",
    "ToolError": "errors",
    "ToolValidationError": "errors",
    "TruncationError": "errors",
    "TrustStoreError": "errors",
    "UnknownToolError": "errors",
    # pi_nb.truncation
    "DEFAULT_MAX_BYTES": "truncation",
    "DEFAULT_MAX_LINES": "truncation",
    "format_size": "truncation",
    "GREP_MAX_LINE_LENGTH": "truncation",
    "OutputAccumulator": "truncation",
    "truncate_head": "truncation",
    "truncate_line": "truncation",
    "truncate_tail": "truncation",
    "TruncationResult": "truncation",
    # pi_nb.tokens
    "calculate_context_tokens": "tokens",
    "ContextTokenEstimate": "tokens",
    "count_message_tokens": "tokens",
    "count_tokens": "tokens",
    "estimate_context_tokens": "tokens",
    "estimate_tokens": "tokens",
    "get_last_assistant_usage": "tokens",
    "message_token_breakdown": "tokens",
    "MessageTokenBreakdown": "tokens",
    # pi_nb.messages
    "AgentMessage": "messages",
    "AssistantMessage": "messages",
    "bash_execution_to_text": "messages",
    "BashExecutionMessage": "messages",
    "BRANCH_SUMMARY_PREFIX": "messages",
    "BRANCH_SUMMARY_SUFFIX": "messages",
    "BranchSummaryMessage": "messages",
    "COMPACTION_SUMMARY_PREFIX": "messages",
    "COMPACTION_SUMMARY_SUFFIX": "messages",
    "CompactionSummaryMessage": "messages",
    "convert_to_llm": "messages",
    "create_branch_summary_message": "messages",
    "create_compaction_summary_message": "messages",
    "create_custom_message": "messages",
    "CustomMessage": "messages",
    "ImageContent": "messages",
    "Message": "messages",
    "StopReason": "messages",
    "TextContent": "messages",
    "ThinkingContent": "messages",
    "ToolCall": "messages",
    "ToolResultMessage": "messages",
    "Usage": "messages",
    "UsageCost": "messages",
    "UserMessage": "messages",
    # pi_nb.session
    "assert_valid_session_id": "session",
    "BranchSummaryEntry": "session",
    "build_context_entries": "session",
    "build_session_context": "session",
    "CompactionEntry": "session",
    "CURRENT_SESSION_VERSION": "session",
    "CustomEntry": "session",
    "CustomMessageEntry": "session",
    "ENV_AGENT_DIR": "session",
    "ENV_SESSION_DIR": "session",
    "FileEntry": "session",
    "find_most_recent_session": "session",
    "get_agent_dir": "session",
    "get_default_session_dir": "session",
    "get_latest_compaction_entry": "session",
    "get_sessions_dir": "session",
    "LabelEntry": "session",
    "list_all_sessions": "session",
    "list_sessions": "session",
    "load_entries_from_file": "session",
    "LoadProblem": "session",
    "migrate_session_entries": "session",
    "migrate_to_current_version": "session",
    "ModelChangeEntry": "session",
    "parse_session_entries": "session",
    "read_session_file": "session",
    "session_entry_to_context_messages": "session",
    "SessionContext": "session",
    "SessionEntry": "session",
    "SessionFileContents": "session",
    "SessionHeader": "session",
    "SessionInfo": "session",
    "SessionInfoEntry": "session",
    "SessionManager": "session",
    "SessionMessageEntry": "session",
    "SessionTreeNode": "session",
    "ThinkingLevelChangeEntry": "session",
    # pi_nb.resources
    "APP_NAME": "resources",
    "canonicalize_path": "resources",
    "CONFIG_DIR_NAME": "resources",
    "ContextFile": "resources",
    "create_synthetic_source_info": "resources",
    "DefaultProjectTrust": "resources",
    "expand_prompt_template": "resources",
    "FileSettingsStorage": "resources",
    "find_git_paths": "resources",
    "format_skills_for_prompt": "resources",
    "get_project_trust_options": "resources",
    "get_project_trust_parent_path": "resources",
    "GitPaths": "resources",
    "has_trust_requiring_project_resources": "resources",
    "InMemorySettingsStorage": "resources",
    "is_local_path": "resources",
    "load_context_file_from_dir": "resources",
    "load_project_context_files": "resources",
    "load_prompt_templates": "resources",
    "load_skill_from_file": "resources",
    "load_skills": "resources",
    "load_skills_from_dir": "resources",
    "LoadSkillsResult": "resources",
    "parse_command_args": "resources",
    "parse_frontmatter": "resources",
    "PathMetadata": "resources",
    "ProjectTrustDecision": "resources",
    "ProjectTrustOption": "resources",
    "ProjectTrustStore": "resources",
    "ProjectTrustStoreEntry": "resources",
    "ProjectTrustUpdate": "resources",
    "PromptTemplate": "resources",
    "resolve_project_trust": "resources",
    "resolve_project_trusted": "resources",
    "ResolvedResource": "resources",
    "ResourceCollision": "resources",
    "ResourceDiagnostic": "resources",
    "ResourceLoader": "resources",
    "SettingsManager": "resources",
    "SettingsScope": "resources",
    "SettingsStorage": "resources",
    "Skill": "resources",
    "SkillDiagnostic": "resources",
    "SourceInfo": "resources",
    "strip_frontmatter": "resources",
    "substitute_args": "resources",
    "TrustPrompt": "resources",
    "TrustStore": "resources",
    # pi_nb.system_prompt
    "build_system_prompt": "system_prompt",
    # pi_nb.compaction
    "BRANCH_SUMMARY_PREAMBLE": "compaction",
    "BRANCH_SUMMARY_PROMPT": "compaction",
    "BranchPreparation": "compaction",
    "BranchSummaryResult": "compaction",
    "BranchSummarySettings": "compaction",
    "collect_entries_for_branch_summary": "compaction",
    "CollectEntriesResult": "compaction",
    "compact": "compaction",
    "CompactionOutcome": "compaction",
    "CompactionPreparation": "compaction",
    "CompactionResult": "compaction",
    "CompactionSettings": "compaction",
    "complete_summarization": "compaction",
    "compute_file_lists": "compaction",
    "content_text": "compaction",
    "create_file_ops": "compaction",
    "CutPointResult": "compaction",
    "DEFAULT_BRANCH_SUMMARY_SETTINGS": "compaction",
    "DEFAULT_COMPACTION_SETTINGS": "compaction",
    "DEFAULT_RETRY_SETTINGS": "compaction",
    "extract_file_ops_from_message": "compaction",
    "FileOperations": "compaction",
    "find_cut_point": "compaction",
    "find_turn_start_index": "compaction",
    "find_valid_cut_points": "compaction",
    "format_file_operations": "compaction",
    "generate_branch_summary": "compaction",
    "generate_summary": "compaction",
    "generate_summary_with_usage": "compaction",
    "generate_turn_prefix_summary": "compaction",
    "get_overflow_patterns": "compaction",
    "get_summarization_failure": "compaction",
    "is_context_overflow": "compaction",
    "is_recoverable_length": "compaction",
    "is_retryable_assistant_error": "compaction",
    "navigate_tree": "compaction",
    "NavigateTreeResult": "compaction",
    "prepare_branch_entries": "compaction",
    "prepare_compaction": "compaction",
    "retry_assistant_call": "compaction",
    "RetryCallbacks": "compaction",
    "RetrySettings": "compaction",
    "run_compaction": "compaction",
    "serialize_conversation": "compaction",
    "SessionBeforeCompactEvent": "compaction",
    "SessionBeforeCompactResult": "compaction",
    "SessionBeforeTreeEvent": "compaction",
    "SessionBeforeTreeResult": "compaction",
    "SessionCompactEvent": "compaction",
    "SessionCompactFailedEvent": "compaction",
    "SessionTreeEvent": "compaction",
    "should_compact": "compaction",
    "SUMMARIZATION_PROMPT": "compaction",
    "SUMMARIZATION_SYSTEM_PROMPT": "compaction",
    "SummaryResult": "compaction",
    "TreePreparation": "compaction",
    "TreeSummary": "compaction",
    "TURN_PREFIX_SUMMARIZATION_PROMPT": "compaction",
    "UPDATE_SUMMARIZATION_PROMPT": "compaction",
    # pi_nb.tools
    "AbortController": "tools",
    "AbortSignal": "tools",
    "AgentTool": "tools",
    "AgentToolResult": "tools",
    "ALL_TOOL_NAMES": "tools",
    "BashSpawnContext": "tools",
    "BashTool": "tools",
    "cleanup_tool_temp_files": "tools",
    "create_all_tools": "tools",
    "create_bash_tool": "tools",
    "create_builtin_tools": "tools",
    "create_coding_tools": "tools",
    "create_edit_tool": "tools",
    "create_find_tool": "tools",
    "create_grep_tool": "tools",
    "create_ls_tool": "tools",
    "create_read_only_tools": "tools",
    "create_read_tool": "tools",
    "create_tool": "tools",
    "create_write_tool": "tools",
    "detect_supported_image_mime_type": "tools",
    "detect_supported_image_mime_type_from_file": "tools",
    "EditTool": "tools",
    "execute_tool_call": "tools",
    "FindTool": "tools",
    "generate_diff_string": "tools",
    "generate_unified_patch": "tools",
    "get_shell_config": "tools",
    "GrepTool": "tools",
    "LocalBashOperations": "tools",
    "LsTool": "tools",
    "ReadTool": "tools",
    "resolve_read_path": "tools",
    "resolve_to_cwd": "tools",
    "run_tool": "tools",
    "ToolContext": "tools",
    "ToolExecutionMode": "tools",
    "ToolOutcome": "tools",
    "validate_tool_arguments": "tools",
    "with_file_mutation_queue": "tools",
    "WriteTool": "tools",
    # pi_nb.providers
    "AssistantMessageEvent": "providers",
    "calculate_cost": "providers",
    "Context": "providers",
    "context_window_for": "providers",
    "CostTier": "providers",
    "empty_usage": "providers",
    "find_model": "providers",
    "get_model": "providers",
    "list_models": "providers",
    "list_providers": "providers",
    "MissingProviderSettingError": "providers",
    "Model": "providers",
    "ModelCost": "providers",
    "ModelSpec": "providers",
    "OfflineModel": "providers",
    "ScriptedModel": "providers",
    "ScriptedRequest": "providers",
    "session_context_window": "providers",
    "session_cost": "providers",
    "SPOKEN_APIS": "providers",
    "StreamOptions": "providers",
    "THINKING_LEVELS": "providers",
    "ToolSchema": "providers",
    "UnknownModelError": "providers",
    "UnsupportedApiError": "providers",
    "usage_cost_breakdown": "providers",
    # pi_nb.agent
    "Agent": "agent",
    "AgentContext": "agent",
    "AgentLoopConfig": "agent",
    "AgentSession": "agent",
    "AgentState": "agent",
    "PromptResult": "agent",
    "run_agent_loop": "agent",
    "run_agent_loop_continue": "agent",
    "SessionHooks": "agent",
    # pi_nb.what_if
    "areplay": "what_if",
    "replay": "what_if",
    "ReplayResult": "what_if",
    "ReplayStep": "what_if",
    "sweep": "what_if",
    "SweepOutcome": "what_if",
    # pi_nb.redaction
    "known_secrets": "redaction",
    "redact": "redaction",
    "redact_value": "redaction",
    "register_secret": "redaction",
    "register_secret_env": "redaction",
    "StreamRedactor": "redaction",
    # pi_nb.providers.openai_responses
    "OpenAIResponsesProvider": "providers.openai_responses",
    # pi_nb.providers.readiness: whether a model can run now, and what is missing
    "Readiness": "providers.readiness",
    "model_readiness": "providers.readiness",
    "spec_readiness": "providers.readiness",
    # pi_nb.agent.factory: AgentSession.create's assembly
    "create_agent_session": "agent.factory",
    # pi_nb.auth: Pi's auth.json and its sign-ins
    "login": "auth",
    "logout": "auth",
    "credential_source": "auth",
    "login_providers": "auth",
}

__all__ = sorted(_EXPORTS)

# Internal names that this top level exported before 0.2, and the module that holds them now.
_MOVED: dict[str, str] = {
    "AccumulatorSnapshot": "pi_nb.truncation",
    "BUILTIN_TOOL_GUIDELINES": "pi_nb.system_prompt",
    "BUILTIN_TOOL_SNIPPETS": "pi_nb.system_prompt",
    "CHECKPOINTS": "pi_nb.what_if",
    "CONTEXT_FILE_CANDIDATES": "pi_nb.resources",
    "CompactionReason": "pi_nb.compaction",
    "DEFAULT_ACTIVE_TOOLS": "pi_nb.tools",
    "DEFAULT_BRANCH_SUMMARY_CONTEXT_WINDOW": "pi_nb.compaction",
    "DEFAULT_ENCODING": "pi_nb.tokens",
    "DEFAULT_SELECTED_TOOLS": "pi_nb.system_prompt",
    "DEFAULT_SUMMARY_TOKENS": "pi_nb.what_if",
    "DocPaths": "pi_nb.system_prompt",
    "ENCODING_NAMES": "pi_nb.tokens",
    "ENTRY_KEY_ORDER": "pi_nb.session",
    "ESTIMATED_IMAGE_CHARS": "pi_nb.tokens",
    "FileLists": "pi_nb.compaction.serialization",
    "HookError": "pi_nb.compaction.hooks",
    "HookRunner": "pi_nb.compaction.hooks",
    "IMAGE_BLOCKED_TEXT": "pi_nb.messages",
    "KNOWN_MODELS": "pi_nb.providers",
    "MAX_SKILL_DESCRIPTION_LENGTH": "pi_nb.resources",
    "MAX_SKILL_NAME_LENGTH": "pi_nb.resources",
    "NO_MODEL_MESSAGE": "pi_nb.compaction",
    "NextTurnSnapshot": "pi_nb.agent.loop",
    "OFFLINE_RESPONSE_MODEL": "pi_nb.providers",
    "OVERFLOW_RECOVERY_FAILED": "pi_nb.agent",
    "OrderedStrSet": "pi_nb.compaction.serialization",
    "PI_NB_INTRO": "pi_nb.system_prompt",
    "PendingMessageQueue": "pi_nb.agent.agent",
    "PlannedAction": "pi_nb.providers.offline",
    "ProjectTrustHook": "pi_nb.resources",
    "PromptSource": "pi_nb.resources.loader",
    "PromptsResult": "pi_nb.resources.loader",
    "RecordedCompaction": "pi_nb.what_if",
    "ReplayCompaction": "pi_nb.what_if",
    "ReplayDecision": "pi_nb.what_if",
    "SessionTreeReader": "pi_nb.compaction.branch_summary",
    "SettingsErrorRecord": "pi_nb.resources.settings",
    "SkillRootMode": "pi_nb.resources",
    "SupportsAbort": "pi_nb.providers.base",
    "TOOL_RESULT_MAX_CHARS": "pi_nb.compaction",
    "TRUNCATED_RECOVERY_FAILED": "pi_nb.agent",
    "TRUNCATED_TOOL_CALL_TEXT": "pi_nb.agent",
    "TRUST_REQUIRING_PROJECT_CONFIG_RESOURCES": "pi_nb.resources",
    "ToolUpdateCallback": "pi_nb.tools",
    "TrustAsk": "pi_nb.resources",
    "TurnSnapshot": "pi_nb.agent.loop",
    "answer_trust_prompt": "pi_nb.resources.trust",
    "build_entry_index": "pi_nb.session.context",
    "collect_prompt_entries": "pi_nb.resources.prompt_templates",
    "collect_skill_entries": "pi_nb.resources.skills",
    "collect_tool_prompt_options": "pi_nb.system_prompt",
    "create_session_id": "pi_nb.session.ids",
    "decide_project_trust": "pi_nb.resources.trust",
    "dedupe_prompts": "pi_nb.resources.prompt_templates",
    "default_convert_to_llm": "pi_nb.agent.agent",
    "expand_skill_command": "pi_nb.resources.skills",
    "find_shadowed_context_file": "pi_nb.resources.context_files",
    "format_project_trust_prompt": "pi_nb.resources.trust",
    "generate_id": "pi_nb.session.ids",
    "get_branch_entries": "pi_nb.session.context",
    "get_doc_paths": "pi_nb.system_prompt",
    "get_encoding": "pi_nb.tokens",
    "is_cut_point_message": "pi_nb.compaction.cut_points",
    "is_turn_start_message": "pi_nb.compaction.cut_points",
    "make_assistant_message": "pi_nb.providers.base",
    "make_usage": "pi_nb.providers.base",
    "normalize_prompt_guidelines": "pi_nb.system_prompt",
    "normalize_prompt_snippet": "pi_nb.system_prompt",
    "now_ms": "pi_nb.providers.base",
    "placeholder_summary": "pi_nb.what_if",
    "plan_actions": "pi_nb.providers.offline",
    "provider_error_text": "pi_nb.providers.base",
    "read_session_header": "pi_nb.session.jsonl",
    "resolve_resource_paths": "pi_nb.resources.loader",
    "resolve_session_dir": "pi_nb.session.paths",
    "session_file_name": "pi_nb.session.paths",
    "snapshot_message": "pi_nb.providers.base",
    "summary_max_tokens": "pi_nb.compaction.summaries",
}


def __getattr__(name: str) -> "_Any":
    """An exported name, imported from its module on first use (then kept here); a submodule
    (``pi_nb.session``); or an internal name that used to be exported here, found in its module
    with a deprecation warning."""
    module = _EXPORTS.get(name)
    if module is not None:
        value = getattr(_importlib.import_module(f"pi_nb.{module}"), name)
        globals()[name] = value
        return value
    moved = _MOVED.get(name)
    if moved is not None:
        _warnings.warn(
            f"pi_nb.{name} is internal and leaves the top level in pi_nb 0.3; import it from {moved}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(_importlib.import_module(moved), name)
    if not name.startswith("__"):
        try:
            return _importlib.import_module(f"pi_nb.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"pi_nb.{name}":
                raise
    raise AttributeError(f"module 'pi_nb' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


def load_ipython_extension(ipython: object) -> None:
    """``%load_ext pi_nb``: registers the ``%%pi`` / ``%pi`` magics (the notebook layer loads only now)."""
    from pi_nb.notebook.magics import load_ipython_extension as _load

    _load(ipython)


def unload_ipython_extension(ipython: object) -> None:
    """``%unload_ext pi_nb``: removes the magics and stops their background work."""
    from pi_nb.notebook.magics import unload_ipython_extension as _unload

    _unload(ipython)
