"""Names written in Cyrillic letters by sound ("Ахмед Лопес" for Ahmed Lopez), for the PHI gate.

Usage::

    from rewardkit.envs.fhir.translit import name_skeletons, cyrillic_word_pairs
    name_skeletons("Lopez"), name_skeletons("Лопес")     # {'lps'}, {'lps'}
    ("gmd", "lps") in set(cyrillic_word_pairs("пациент Ахмед Лопес"))   # True

The look-alike table of ``phi.fold`` reads "Лопез" only where a letter imitates a Latin one
(о, е); a transliteration by *sound* (х for h, л for l, з for z) needs another key. Both the
world's names and the text's Cyrillic words are reduced to a consonant *skeleton*: vowels and
soft signs dropped, consonants mapped to classes that both scripts share (г/х/g/h, с/з/ш/ж/s/z,
к/q/k, в/v/w …), doubled classes merged. A Latin letter that Cyrillic renders several ways
(c as к, с or ц; j as дж or й; h sounded or silent) gives the name several skeletons. Only
pairs of adjacent words of which at least one holds a Cyrillic letter are read this way, so
English text is never matched by skeleton ("lips" is no "Lopez"); and a word whose skeleton
is one letter must be capitalised ("Айша Росси", not "ещё раз").
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Iterator
from functools import lru_cache

__all__ = ["cyrillic_word_pairs", "name_skeletons"]

_VOWELS = "aeiouy"
# Latin letters (after diacritics are removed) → the consonant classes they may sound as.
_LATIN: dict[str, tuple[str, ...]] = {
    "b": ("b",),
    "c": ("k", "s", "ts"),
    "d": ("d",),
    "f": ("f",),
    "g": ("g",),
    "h": ("g", ""),
    "j": ("ds", ""),
    "k": ("k",),
    "l": ("l",),
    "m": ("m",),
    "n": ("n",),
    "p": ("p",),
    "q": ("k",),
    "r": ("r",),
    "s": ("s",),
    "t": ("t",),
    "v": ("v",),
    "w": ("v", ""),
    "x": ("ks",),
    "z": ("s",),
}
_LATIN_DIGRAPHS: dict[str, tuple[str, ...]] = {
    "kh": ("g",),
    "ch": ("c", "k", "s"),
    "sh": ("s",),
    "zh": ("s",),
    "th": ("t",),
    "ph": ("f",),
    "ck": ("k",),
}
# Cyrillic letters (lower case) → their consonant class; vowels, й and the signs → "".
_CYRILLIC = dict(
    zip(
        "бвгґджзклмнпрстфхцчшщ",
        [*"bvggdssklmnprstfg", "ts", *"css"],
        strict=True,
    )
)
_WORD = re.compile(r"[^\W\d_]+")


def _plain(text: str) -> str:
    """Lower case without diacritics (й stays й: NFKD would make it и + breve, a vowel too)."""
    out = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text).lower())
    return "".join(c for c in out if not unicodedata.combining(c))


def _merge(s: str) -> str:
    return re.sub(r"(.)\1+", r"\1", s)


def name_skeletons(name: str) -> set[str]:
    """Every skeleton a word may have: a Latin name once written in Cyrillic by sound (a
    digraph read as one sound or letter by letter: "Chen" as Чен or Цхен), or a written word
    (Cyrillic letters by sound, Latin ones as above); empty skeletons left out."""
    s = _plain(name).replace("ae", "e").replace("oe", "o").replace("ue", "u")
    return {k for k in (_merge(x) for x in _spell(s)) if k}


@lru_cache(maxsize=4096)
def _spell(s: str) -> frozenset[str]:
    if not s:
        return frozenset({""})
    ch = s[0]
    first = (_CYRILLIC[ch],) if ch in _CYRILLIC else _LATIN.get(ch, ("",))  # vowels are silent
    out = {a + rest for a in first for rest in _spell(s[1:])}
    if s[:2] in _LATIN_DIGRAPHS:
        out |= {a + rest for a in _LATIN_DIGRAPHS[s[:2]] for rest in _spell(s[2:])}
    return frozenset(out)


def _has_cyrillic(word: str) -> bool:
    return any("CYRILLIC" in unicodedata.name(ch, "") for ch in word)


def cyrillic_word_pairs(text: str) -> Iterator[tuple[str, str]]:
    """Skeleton pairs of adjacent words of ``text`` of which one holds a Cyrillic letter."""
    words = _WORD.findall(text)
    for a, b in itertools.pairwise(words):
        if _has_cyrillic(a) or _has_cyrillic(b):
            # short words ("в", "за", "ещё") are no names unless capitalised
            sa = [k for k in name_skeletons(a) if len(k) >= 2 or a[:1].isupper()]
            sb = [k for k in name_skeletons(b) if len(k) >= 2 or b[:1].isupper()]
            yield from itertools.product(sa, sb)
