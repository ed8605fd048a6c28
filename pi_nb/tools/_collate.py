"""An approximation of ICU's root collation, for ``ls``'s ``localeCompare`` sort (private).

Pi sorts directory entries with ``a.toLowerCase().localeCompare(b.toLowerCase())``: Node's ICU
collator (en-US, which is CLDR root order). That is not code-point order: punctuation sorts before
digits before letters (`` _-,;:!?.'"()[]{}@*/\\&#%`^+<=>|~$0-9a-z``), an accented letter sorts
with its base letter and only after all unaccented differences (``a < ä < a b < ab``), and
controls are ignored. This module reproduces that exactly for ASCII and for Latin letters with
combining accents (through NFD); other characters sort after ASCII letters by code point, which
matches ICU's script order for the common scripts but not for every symbol. Entries that compare
equal keep the order ``readdir`` gave them (libuv sorts by bytes).
"""

from __future__ import annotations

import unicodedata

__all__ = ["collation_key"]

_ASCII_ORDER = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz"
_PRIMARY = {ch: i + 1 for i, ch in enumerate(_ASCII_ORDER)}
# DUCET secondary weights of the common combining accents (above the base weight 0x20)
_SECONDARY = {
    "\u0301": 0x24,  # acute
    "\u0300": 0x25,  # grave
    "\u0306": 0x26,  # breve
    "\u0302": 0x27,  # circumflex
    "\u030c": 0x28,  # caron
    "\u030a": 0x29,  # ring above
    "\u0308": 0x2B,  # diaeresis
    "\u030b": 0x2C,  # double acute
    "\u0303": 0x2D,  # tilde
    "\u0307": 0x2E,  # dot above
    "\u0327": 0x30,  # cedilla
    "\u0328": 0x31,  # ogonek
    "\u0304": 0x32,  # macron
}
_EXPANSIONS = {"ß": "ss", "æ": "ae", "œ": "oe", "ĳ": "ij"}


def collation_key(text: str) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(primary, secondary, tertiary) weights; compare tuples like ICU compares strings."""
    if text.isascii() and text.isprintable() and not any("A" <= c <= "Z" for c in text):
        n = len(text)
        return tuple(map(_PRIMARY.__getitem__, text)), (0x20,) * n, (0x02,) * n
    primary: list[int] = []
    secondary: list[int] = []
    tertiary: list[int] = []
    for ch in unicodedata.normalize("NFD", text):
        if ch in _EXPANSIONS:
            for sub in _EXPANSIONS[ch]:
                primary.append(_PRIMARY[sub])
                secondary.append(0x20)
                tertiary.append(0x04)
            continue
        if "A" <= ch <= "Z":  # same letter as the lowercase one, upper case sorts after it (tertiary)
            primary.append(_PRIMARY[ch.lower()])
            secondary.append(0x20)
            tertiary.append(0x08)
            continue
        weight = _PRIMARY.get(ch)
        if weight is not None:
            primary.append(weight)
            secondary.append(0x20)
            tertiary.append(0x02)
            continue
        category = unicodedata.category(ch)
        if category == "Mn":
            secondary.append(_SECONDARY.get(ch, 0x100 + ord(ch)))
            continue
        if category in ("Cc", "Cf"):
            continue  # completely ignorable
        if ch.isspace():
            primary.append(_PRIMARY[" "])
        else:
            primary.append(0x1000 + ord(ch))
        secondary.append(0x20)
        tertiary.append(0x02)
    return tuple(primary), tuple(secondary), tuple(tertiary)
