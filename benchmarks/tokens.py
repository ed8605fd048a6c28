"""Speed of pi_nb.tokens: Pi's estimate over a 100,000-message session, and tiktoken counts.

    .venv/bin/python benchmarks/tokens.py [--messages 100000]

Prints one line per measurement (best of 3 for the in-process ones). The encoding load is timed in
a fresh interpreter, since the encodings are cached per process.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from pi_nb import count_message_tokens, count_tokens, estimate_context_tokens, estimate_tokens

USAGE = {"input": 1000, "output": 200, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1200}


def session(n: int, *, non_ascii: bool, seed: int = 1) -> list[dict[str, Any]]:
    """A plausible agent session: user prompt, assistant tool call, tool result (2 KB), answer."""
    rng = random.Random(seed)
    word = "naïve café 😀 " if non_ascii else "lorem ipsum "
    messages: list[dict[str, Any]] = []
    while len(messages) < n:
        k = len(messages)
        messages.append({"role": "user", "content": word * rng.randint(5, 40), "timestamp": k})
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": word * rng.randint(5, 30)},
                    {
                        "type": "toolCall",
                        "id": f"c{k}",
                        "name": "read",
                        "arguments": {"path": f"src/m{k}.py", "offset": 1, "limit": 200},
                    },
                ],
                "usage": USAGE,
                "stopReason": "toolUse",
                "timestamp": k + 1,
            }
        )
        messages.append(
            {
                "role": "toolResult",
                "toolCallId": f"c{k}",
                "toolName": "read",
                "content": [{"type": "text", "text": (word * 200)[:2048]}],
                "isError": False,
                "timestamp": k + 2,
            }
        )
        messages.append(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": word * 20}],
                "usage": USAGE,
                "stopReason": "stop",
                "timestamp": k + 3,
            }
        )
    return messages[:n]


def best(fn: Callable[[], object], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=100_000)
    n = ap.parse_args().messages

    for non_ascii in (False, True):
        msgs = session(n, non_ascii=non_ascii)
        chars = sum(len(str(m.get("content"))) for m in msgs)
        t = best(lambda msgs=msgs: [estimate_tokens(m) for m in msgs])
        label = "non-ASCII" if non_ascii else "ASCII"
        print(
            f"estimate_tokens, {n} {label} messages (~{chars / 1e6:.0f}M chars): {t * 1000:.0f} ms ({t / n * 1e6:.2f} us/message)"
        )
        t = best(lambda msgs=msgs: estimate_context_tokens(msgs))
        print(
            f"estimate_context_tokens, {n} {label} messages (usage on the last assistant): {t * 1000:.2f} ms"
        )

    for name in ("o200k_base", "cl100k_base"):
        code = f"import time, pi_nb.tokens; t = time.perf_counter(); pi_nb.tokens.get_encoding({name!r}); print(time.perf_counter() - t)"
        t_import = "import time; t = time.perf_counter(); import pi_nb; print(time.perf_counter() - t)"
        load = float(
            subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        )
        print(f"first get_encoding({name!r}) in a fresh process: {load * 1000:.0f} ms")
    imp = float(
        subprocess.run([sys.executable, "-c", t_import], capture_output=True, text=True, check=True).stdout
    )
    print(f"import pi_nb (encodings not loaded): {imp * 1000:.0f} ms")

    text = ("def f(x):\n    return x * 2  # naïve 😀\n" * 30_000)[:1_000_000]
    for name in ("o200k_base", "cl100k_base"):
        count_tokens("warm up", name)
        t = best(lambda name=name: count_tokens(text, name))
        print(
            f"count_tokens, 1M chars of code, {name}: {t * 1000:.0f} ms ({len(text) / t / 1e6:.1f} M chars/s)"
        )
    msgs = session(10_000, non_ascii=False)
    t = best(lambda: [count_message_tokens(m) for m in msgs], repeat=1)
    print(f"count_message_tokens, 10000 ASCII messages: {t * 1000:.0f} ms")


if __name__ == "__main__":
    main()
