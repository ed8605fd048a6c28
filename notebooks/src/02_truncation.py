# %% [markdown]
# # 02 · The tool-output boundary
#
# A tool result enters the conversation once and then rides along in **every later request**
# until compaction removes it. One careless `cat` of a log file could fill the window for the
# rest of the session. So Pi caps every tool result before the model sees it:
#
# * at most **2,000 lines** or **50 KB** (51,200 bytes, counted in UTF-8), whichever comes first;
# * `read` keeps the **head** (the model can continue with `offset`), `bash` keeps the **tail**
#   (errors are at the end) and saves the whole output to a temporary file;
# * `grep` has three limits of its own: **100 matches**, **500 characters per line**, 50 KB.
#
# Each cut comes with a notice in brackets that tells the model what happened and how to get more.
# This notebook makes each of those cuts happen on purpose and puts them under a magnifier.

# %%
import os
import pathlib
import tempfile

work = pathlib.Path(tempfile.mkdtemp(prefix="pi_nb-02-"))
os.environ["PI_CODING_AGENT_DIR"] = str(work / "agent")
project = work / "project"
(project / "src").mkdir(parents=True)
os.chdir(project)

# 3,000 log lines of ~55 bytes: 165 KB, so the byte limit is hit long before the line limit
(project / "server.log").write_text(
    "".join(f"2026-01-01T10:{i // 60 % 60:02d}:{i % 60:02d}Z INFO request {i} served in {i * 7 % 97} ms\n" for i in range(3000))
)
# 5,000 tiny lines: here the line limit comes first
(project / "numbers.txt").write_text("".join(f"{i}\n" for i in range(1, 5001)))
# one 60,000-byte line of em dashes (3 bytes each), no trailing newline
(project / "dashes.txt").write_text("—" * 20000)
# source files with many TODOs, some on very long lines of German text
(project / "src" / "app.py").write_text("".join(f"def handler_{i}():\n    # TODO: validate input {i}\n    return {i}\n\n" for i in range(10)))
(project / "src" / "i18n.py").write_text(
    "".join(f"MESSAGE_{i} = {'Grüße aus Köln — ' * 40!r}  # TODO: translate {i}\n" for i in range(140))
)
for f in sorted(project.rglob("*.*")):
    print(f"{f.relative_to(project)}: {f.stat().st_size:,} bytes")

# %%
%load_ext pi_nb

# %% [markdown]
# A small helper: the last tool result of a turn, with the tool call that asked for it.

# %%
from pi_nb.notebook import tool_result_truncation


def last_result(turn):
    calls = {b["id"]: b for m in turn.messages if m["role"] == "assistant" for b in m["content"] if b["type"] == "toolCall"}
    result = [m for m in turn.messages if m["role"] == "toolResult"][-1]
    return result, calls[result["toolCallId"]]


# %% [markdown]
# ## `read` keeps the head
#
# `server.log` is 165 KB. `read` keeps whole lines from the top until the next line would
# cross 51,200 bytes, then tells the model where to continue (`Use offset=...`).

# %%
%%pi
read server.log

# %% [markdown]
# The truncation view puts what the model saw next to the full output: the numbers Pi stored in
# the result's `details.truncation`, the kept and dropped lines around the cut, and the notice.
# (For a `read` the full text comes from reading the file again.)

# %%
result, call = last_result(_)
tool_result_truncation(result, tool_call=call, cwd=str(project))

# %% [markdown]
# Lines or bytes: whichever limit is hit first names the cut. `numbers.txt` has 5,000 lines but
# only 24 KB, so here the cut is by **lines**, and the notice has no "(50.0KB limit)".

# %%
%%pi
read numbers.txt

# %% [markdown]
# (5,001 lines? `read` splits the file at every newline, so the empty string after the last one
# counts as a line: a Pi quirk that pi_nb keeps.)

# %%
result, call = last_result(_)
print(result["content"][0]["text"][-90:])
print(result["details"]["truncation"]["truncatedBy"], result["details"]["truncation"]["outputLines"], "lines kept")

# %% [markdown]
# ## `bash` keeps the tail, and the whole output goes to a file
#
# For a command the interesting part is usually the **end** (the error, the summary line).
# `bash` keeps the last lines and writes the complete output to `$TMPDIR/pi-bash-<hex>.log`,
# whose path is in the notice: the model can `grep` or `sed` it later without the context paying
# for it now. The view reads that file to show what was dropped.

# %%
%%pi
run `seq 100000`

# %%
result, call = last_result(_)
print("full output file:", result["details"]["fullOutputPath"])
print(f"{os.path.getsize(result['details']['fullOutputPath']):,} bytes on disk")
tool_result_truncation(result, tool_call=call)

# %% [markdown]
# ## A line larger than the byte limit, with a multibyte character at the cut
#
# `dashes.txt` is a single line of 20,000 em dashes: 60,000 bytes, since `—` takes 3 bytes in
# UTF-8. No whole line fits in 50 KB, and the two tools deal with that differently:
#
# * `read` keeps **nothing** and tells the model how to read the first 51,200 bytes with `sed`
#   and `head -c` instead;
# * `bash` keeps the **last 51,200 bytes of the line** — but 60,000 − 51,200 = 8,800 is not a
#   multiple of 3, so the cut would land inside a character. Pi moves the start forward past the
#   UTF-8 continuation bytes, so the kept text starts on a whole character and is 2 bytes short
#   of the limit.

# %%
%%pi
read dashes.txt and run `head -c 60000 dashes.txt`

# %%
turn = _
read_result = [m for m in turn.messages if m["role"] == "toolResult"][0]
print(read_result["content"][0]["text"])

# %%
result, call = last_result(turn)
print(result["content"][0]["text"][-140:])
tool_result_truncation(result, tool_call=call)

# %% [markdown]
# The bytes around the cut, in the view above: the two bytes marked *skipped* are the tail of a
# `—` whose first byte was dropped. The same rule, on a string small enough to read in full:

# %%
from pi_nb.notebook import truncation_view

truncation_view("first line\nabc😀😀😀xyz", "tail", max_bytes=10)

# %% [markdown]
# ## `grep`: 100 matches, 500 characters a line, 50 KB
#
# `grep` is not among Pi's default tools (`read`, `bash`, `edit`, `write`); `--tools` turns it on
# for this turn. The search below hits all three of its limits at once: `src/` holds 150 TODOs
# (only the first 100 matches are kept), the lines of `i18n.py` are 700 characters long (each is
# cut to 500 characters with `... [truncated]`), and 100 such lines of German text are more than
# 51,200 bytes (the output is cut again, by bytes). The notices are joined into one bracket.

# %%
%%pi --tools read,bash,grep,ls
search for "TODO" in src

# %%
result, call = last_result(_)
print(result["content"][0]["text"][-300:])
{k: v for k, v in result["details"].items() if k != "truncation"}

# %% [markdown]
# The 500-character cut counts JavaScript string length: UTF-16 code units, where an emoji is
# two. Pi can cut between the two halves of an emoji and leave half a character behind;
# `pi_nb.truncate_line` drops the whole pair instead — one of the few places where pi_nb
# deliberately differs from Pi.

# %%
import pi_nb

line = "x" * 499 + "😀" + " and more"  # the emoji is UTF-16 units 500 and 501
text, was_truncated = pi_nb.truncate_line(line)
print(was_truncated, repr(text[490:]))

# %% [markdown]
# ## Lines, bytes, characters, tokens
#
# The limits are in lines and bytes, the window is in tokens, and Pi's own token estimate is
# characters / 4. For English they roughly agree; for other scripts they do not. The same
# 50 KB byte limit holds very different amounts of text — and of tokens:

# %%
import pandas as pd

samples = {
    "English": "The quick brown fox jumps over the lazy dog. ",
    "German": "Grüße aus Köln — die Straßenbahn fährt um Viertel nach. ",
    "Chinese": "今天天气很好，我们去公园散步吧。",
    "emoji": "😀🚀🎉✨",
}
rows = []
for name, unit in samples.items():
    head = pi_nb.truncate_head("\n".join([unit] * 4000))  # 4,000 lines: more than either limit
    kept = head.content
    rows.append(
        {
            "text": name,
            "cut by": head.truncated_by,
            "lines kept": head.output_lines,
            "bytes kept": head.output_bytes,
            "characters": len(kept),
            "Pi estimate (chars/4)": pi_nb.estimate_tokens({"role": "user", "content": kept, "timestamp": 0}),
            "tiktoken o200k": pi_nb.count_tokens(kept),
        }
    )
pd.DataFrame(rows).set_index("text")

# %% [markdown]
# Look at the Chinese row: 50 KB is about 17,700 characters, which Pi's chars/4 estimate calls
# some 4,400 tokens, while the tokenizer counts nearly three times that. Pi only uses its
# estimate for messages that arrived *after* the last response with provider-reported usage
# (notebook 04), so the error does not accumulate — but a big tool result in a non-Latin script
# can still push a request further past the threshold than the estimate suggests.

# %% [markdown]
# ## Every cut of this session, in one frame and one plot
#
# `tool_results_df` has one row per tool result with the truncation fields Pi stored;
# `plot_truncation` compares, per tool, how many bytes the model saw with the full outputs.

# %%
from pi_nb.notebook import plot_truncation, tool_results_df

session = %pi session
frame = tool_results_df(session.session_manager)
frame[["tool_name", "truncated_by", "output_lines", "total_lines", "output_bytes", "total_bytes", "last_line_partial", "first_line_exceeds_limit", "match_limit_reached"]]

# %%
plot_truncation(session.session_manager)
