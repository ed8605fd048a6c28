"""The summarisation prompts, in pi_nb's words with Pi's exact structure.

What is Pi's and must not change: the section headings (``## Goal``, ``## Constraints &
Preferences``, ``## Progress`` with ``### Done`` / ``### In Progress`` / ``### Blocked``,
``## Key Decisions``, ``## Next Steps``, and ``## Critical Context`` for compactions only), their
order, the "Use this EXACT format" instruction, the closing line about exact paths, the
``<conversation>`` / ``<previous-summary>`` tags around the material, the ``Additional focus:``
suffix for custom instructions, the turn-prefix headings (``## Original Request``,
``## Early Progress``, ``## Context for Suffix``) and the branch-summary preamble (it is persisted
in the session, and other tools read it). The explanatory prose around them is ours.
"""

from __future__ import annotations

__all__ = [
    "BRANCH_SUMMARY_PREAMBLE",
    "BRANCH_SUMMARY_PROMPT",
    "SUMMARIZATION_PROMPT",
    "TURN_PREFIX_SUMMARIZATION_PROMPT",
    "UPDATE_SUMMARIZATION_PROMPT",
]

_CLOSING = "Keep each section concise. Preserve exact file paths, function names, and error messages."

SUMMARIZATION_PROMPT = f"""Everything inside the conversation tags above is a finished stretch of work. Write a structured checkpoint of it: another model will continue the work from this checkpoint alone, without seeing the conversation.

Use this EXACT format:

## Goal
[What the user wants to achieve; list several goals if the session covered several tasks.]

## Constraints & Preferences
- [Requirements, preferences and limits the user stated]
- [Or "(none)" when there were none]

## Progress
### Done
- [x] [Finished tasks and changes]

### In Progress
- [ ] [Work that is under way]

### Blocked
- [Anything that stops progress, if there is something]

## Key Decisions
- **[Decision]**: [Why it was taken, briefly]

## Next Steps
1. [What should happen next, in order]

## Critical Context
- [Data, examples or references the next model needs]
- [Or "(none)" when nothing applies]

{_CLOSING}"""

UPDATE_SUMMARIZATION_PROMPT = f"""The conversation tags above hold NEW messages only. The checkpoint written before them is in the <previous-summary> tags. Fold the new messages into that checkpoint. RULES:
- PRESERVE everything the previous summary records
- ADD the progress, decisions and context that the new messages bring
- UPDATE the Progress section: move items from "In Progress" to "Done" once they are finished
- UPDATE "Next Steps" to match what has now been done
- PRESERVE exact file paths, function names, and error messages
- You may drop something that is clearly no longer relevant

Use this EXACT format:

## Goal
[Keep the existing goals; add new ones if the task grew]

## Constraints & Preferences
- [Keep the existing ones; add any newly found]

## Progress
### Done
- [x] [Items done before AND items finished in the new messages]

### In Progress
- [ ] [Current work, updated to the new state]

### Blocked
- [Current blockers; remove the resolved ones]

## Key Decisions
- **[Decision]**: [Why, briefly] (keep the earlier decisions, add the new ones)

## Next Steps
1. [Updated to the current state]

## Critical Context
- [Keep what still matters; add new context when needed]

{_CLOSING}"""

TURN_PREFIX_SUMMARIZATION_PROMPT = """The conversation tags above hold the BEGINNING (prefix) of one turn that is too large to keep. The end of that turn (its suffix, the most recent work) stays in the context verbatim.

Summarize the prefix so that the kept suffix can be understood:

## Original Request
[What the user asked for in this turn]

## Early Progress
- [Decisions made and work done in the prefix]

## Context for Suffix
- [What a reader needs to know to follow the kept recent work]

Be brief. Keep only what the kept suffix depends on."""

BRANCH_SUMMARY_PROMPT = f"""Write a structured summary of the conversation branch above, for use as context when the user comes back to this point of the session.

Use this EXACT format:

## Goal
[What the user was trying to achieve on this branch]

## Constraints & Preferences
- [Requirements, preferences and limits that were stated]
- [Or "(none)" when there were none]

## Progress
### Done
- [x] [Finished tasks and changes]

### In Progress
- [ ] [Work that was started but not finished]

### Blocked
- [Anything that stopped progress, if there was something]

## Key Decisions
- **[Decision]**: [Why it was taken, briefly]

## Next Steps
1. [What should happen next to carry this work on]

{_CLOSING}"""

# Persisted at the start of every generated branch summary (Pi's exact text).
BRANCH_SUMMARY_PREAMBLE = "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n"
