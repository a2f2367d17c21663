"""Constituency trees as flat preorder arrays, read from PTB bracket strings.

A :class:`Tree` holds the constituents' labels in preorder, parents (-1: the root) and depths
(the root: 1). Words are dropped as in AESOP's ``deleaf`` unless ``leaves=True`` (then each is a
node labelled by itself; ``words`` holds their indices); an unlabelled bracket has the label ``""``.
Reading follows ``nltk.Tree.fromstring``, one tree per string.

>>> t = read_tree("(ROOT (S (NP (PRP I)) (VP (VBP know)) (. .)))")
>>> t.labels
('ROOT', 'S', 'NP', 'PRP', 'VP', 'VBP', '.')
>>> t.parents
(-1, 0, 1, 2, 1, 4, 1)
>>> t.depths
(1, 2, 3, 4, 3, 4, 3)
>>> read_tree("( (S (NP x)))").labels
('', 'S', 'NP')
>>> w = read_tree("(ROOT (S (NP (PRP I)) (VP (VBP know)) (. .)))", leaves=True)
>>> w.labels, sorted(w.words)
(('ROOT', 'S', 'NP', 'PRP', 'I', 'VP', 'VBP', 'know', '.', '.'), [4, 7, 9])
>>> read_tree(Failure("parse", "no visible character"), where="pair 2 reference")
Traceback (most recent call last):
...
ValueError: pair 2 reference: no tree (parse: no visible character)
>>> read_tree("(S (NP x)", where="pair 3 prediction")
Traceback (most recent call last):
...
ValueError: pair 3 prediction: malformed tree: 1 unclosed bracket(s) in '(S (NP x)'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from paraamr.failures import Failure

__all__ = ["TOKEN", "Tree", "join_tokens", "read_tree"]

#: A bracket with its label (possibly empty, after optional spaces), a closing bracket, or a word.
_BRACKET = re.compile(r"\(\s*([^\s()]*)|(\))|([^\s()]+)")
#: A bracket or a word.
TOKEN = re.compile(r"\(|\)|[^\s()]+")


@dataclass(frozen=True)
class Tree:
    """A tree's constituent labels, parent indices and depths, in depth-first preorder."""

    labels: tuple[str, ...]
    parents: tuple[int, ...]
    depths: tuple[int, ...]
    words: frozenset[int] = frozenset()  # indices of the nodes that are words (read with leaves=True)

    def __len__(self) -> int:
        return len(self.labels)


def join_tokens(parts: Sequence[str]) -> str:
    """Tokens of a bracket string joined by spaces, none after ``(`` or before ``)``."""
    return " ".join(parts).replace("( ", "(").replace(" )", ")")


def _short(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def read_tree(text: str, *, where: str = "tree", leaves: bool = False) -> Tree:
    """The :class:`Tree` of the bracket string ``text``; ValueError naming ``where`` if malformed."""
    if isinstance(text, Failure):  # a parser's per-sentence failure
        raise ValueError(f"{where}: no tree ({text})")
    if not isinstance(text, str):
        raise ValueError(f"{where}: a tree must be a bracket string, got {type(text).__name__}")
    labels: list[str] = []
    parents: list[int] = []
    depths: list[int] = []
    stack: list[int] = []
    words: list[int] = []
    for label, close, word in _BRACKET.findall(text):
        if word:
            if leaves and stack:  # a word outside the brackets is reported below
                words.append(len(labels))
                parents.append(stack[-1])
                depths.append(len(stack) + 1)
                labels.append(word)
            continue
        if close:
            if not stack:
                raise ValueError(f"{where}: malformed tree: unbalanced ')' in {_short(text)}")
            stack.pop()
            continue
        if not stack and labels:
            raise ValueError(f"{where}: malformed tree: text after the end of the tree in {_short(text)}")
        parents.append(stack[-1] if stack else -1)
        depths.append(len(stack) + 1)
        stack.append(len(labels))
        labels.append(label)
    if stack:
        raise ValueError(f"{where}: malformed tree: {len(stack)} unclosed bracket(s) in {_short(text)}")
    if not labels:
        raise ValueError(f"{where}: malformed tree: no bracket in {_short(text)}")
    body = text.strip()
    if not body.startswith("("):
        raise ValueError(f"{where}: malformed tree: {body.split()[0]!r} outside brackets in {_short(text)}")
    if not body.endswith(")"):
        raise ValueError(f"{where}: malformed tree: text after the end of the tree in {_short(text)}")
    return Tree(tuple(labels), tuple(parents), tuple(depths), frozenset(words))
