"""REDA: revised easy data augmentation (Wang 2022) over a tokenizer and a synonym source
(:mod:`paraamr.augment.languages`; English by default); docs/augment.md describes the operators.

Edit counts are ``round(rate * L)`` (Python's round; an operator whose count is 0 is not used), the
length ``L`` counting punctuation and stop words. Every draw comes from a random stream seeded by
``(seed, operator, text)``, so results do not depend on row order or process count.
:meth:`REDA.pool` lists each operator's distinct outputs; :meth:`REDA.augment` takes ``n`` of them.

>>> table = {"big": ("large",), "dog": ("hound",)}
>>> reda = REDA(synonyms=lambda w: table.get(w.lower(), ()), seed=1)
>>> edit_counts(10)
{'SR': 2, 'RS': 2, 'RI': 1, 'RD': 1}
>>> reda.replace("The big dog barks .".split(), 2, random.Random(0))
['The', 'large', 'hound', 'barks', '.']
>>> sorted(reda.pool("The big dog barks .", draws=50))  # L = 5: round(0.5) == 0 for RI and RD
['RM', 'RS', 'SR']
>>> outputs = reda.augment("The big dog barks .", 3)
>>> len(outputs), "The big dog barks ." in outputs
(3, False)
>>> str(reda.signature())
'reda|tok:whitespace|syn:python:<lambda>|draws:20|rates:SR=0.2,RS=0.2,RI=0.1,RD=0.1|seed:1'
>>> paper_recipe(5_000), paper_recipe(50_000)["SR"]
({'SR': 2, 'RS': 2, 'RI': 1, 'RD': 1, 'RM': 1}, 1)
>>> [paper_draws("SR", k) for k in (1, 2, 3, 4, 9)], paper_draws("RM", 1)
([20, 50, 100, 200, 200], 50)
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from paraamr.augment.languages import Tokenizer, Whitespace
from paraamr.augment.synonyms import WORDNET, match_case, source_name, split_affixes
from paraamr.options import check_number
from paraamr.records import normalize
from paraamr.signature import Signature

if TYPE_CHECKING:
    from paraamr.augment.ngram import NgramLM

OPERATORS = ("SR", "RS", "RI", "RD", "RM")
RATES = {"SR": 0.2, "RS": 0.2, "RI": 0.1, "RD": 0.1}
DEFAULT_DRAWS = 20
#: ``draws`` that follows the paper's code per operator and edit count (:func:`paper_draws`).
PAPER_DRAWS = "paper"
#: The paper's outputs per operator for its small (5k, 10k) and large (>= 50k) training sets.
PAPER_SMALL = {"SR": 2, "RS": 2, "RI": 1, "RD": 1, "RM": 1}
PAPER_LARGE = dict.fromkeys(OPERATORS, 1)
#: Training-set rows from which the paper's recipe takes one output of each operator.
PAPER_LARGE_ROWS = 50_000
#: The most draws :func:`paper_draws` gives one operator (the paper's code has no cap: 50 per edit).
MAX_PAPER_DRAWS = 200

Tokens = list[str]


def tokenize(text: str) -> Tokens:
    """REDA's English tokens: the whitespace-separated parts of ``text``."""
    return text.split()


def paper_recipe(rows: int) -> dict[str, int]:
    """The paper's outputs per operator for a training set of ``rows`` rows: :data:`PAPER_SMALL`
    below :data:`PAPER_LARGE_ROWS` (its 5k and 10k sets; smaller sets too), else :data:`PAPER_LARGE`."""
    return dict(PAPER_SMALL if rows < PAPER_LARGE_ROWS else PAPER_LARGE)


def paper_draws(op: str, edits: int) -> int:
    """Draws behind one operator's pool in the paper's code: 20, 50 and 100 for 1, 2 and 3 edits,
    50 per edit above (here at most :data:`MAX_PAPER_DRAWS`, so a long text stays linear); RM 50."""
    if op == "RM":
        return 50
    return min({1: 20, 2: 50, 3: 100}.get(edits, 50 * edits), MAX_PAPER_DRAWS)


def edit_counts(length: int, rates: dict[str, float] = RATES) -> dict[str, int]:
    """Edits per operator for a text of ``length`` tokens: ``round(rate * length)``."""
    return {op: round(rate * length) for op, rate in rates.items()}


class REDA:
    """The REDA operators over one tokenizer and one synonym lookup, seeded.

    ``synonyms(word) -> sequence of words`` defaults to WordNet, ``tokenizer`` to whitespace
    tokens; ``rates`` overrides :data:`RATES` per operator (0 turns one off); ``draws`` is the
    number of tries per operator behind :meth:`pool` (:data:`PAPER_DRAWS`: :func:`paper_draws`);
    ``mix`` the least and most operators RM applies (``(2, 4)`` as REDA's code by default).
    """

    def __init__(
        self,
        *,
        synonyms: Callable[[str], Sequence[str]] = WORDNET,
        tokenizer: Tokenizer | None = None,
        rates: dict[str, float] | None = None,
        draws: int | str = DEFAULT_DRAWS,
        seed: int = 0,
        mix: tuple[int, int] = (2, 2),
    ) -> None:
        if draws != PAPER_DRAWS:
            draws = check_number(draws, f"draws ({PAPER_DRAWS!r} or a count)", kind=int, low=1)
        if len(mix) != 2 or not 2 <= mix[0] <= mix[1] <= 4:
            raise ValueError(f"mix must be (least, most) operators with 2 <= least <= most <= 4, got {mix!r}")
        unknown = set(rates or {}) - set(RATES)
        if unknown:
            raise ValueError(
                f"rates: no operator {', '.join(sorted(unknown))} (operators: {', '.join(RATES)})"
            )
        self._synonyms = synonyms
        self.tokenizer = tokenizer or Whitespace()
        self.rates = {
            op: check_number(r, f"rates[{op!r}]", low=0, high=1)
            for op, r in {**RATES, **(rates or {})}.items()
        }
        self.draws = draws
        self.seed = seed
        self.mix_range = tuple(mix)
        self._cache: dict[str, tuple[str, ...]] = {}
        self._last: tuple[tuple[str, ...], list[int]] = ((), [])

    def signature(self, name: str = "reda") -> Signature:
        """What makes the outputs: tokenizer, synonym source, draws, rates, seed (and RM's number
        of operators when not two)."""
        rates = ",".join(f"{op}={rate}" for op, rate in self.rates.items())
        least, most = self.mix_range
        mix = {} if self.mix_range == (2, 2) else {"mix": f"{least}-{most}" if least < most else least}
        return Signature(
            name,
            tok=self.tokenizer.name,
            syn=source_name(self._synonyms),
            draws=self.draws,
            rates=rates,
            seed=self.seed,
            **mix,
        )

    def token_synonyms(self, token: str) -> tuple[str, ...]:
        """Replacements of ``token`` for SR: its word's synonyms, cased and with its punctuation."""
        found = self._cache.get(token)
        if found is None:
            prefix, word, suffix = split_affixes(token)
            found = tuple(
                prefix + match_case(syn, word) + suffix
                for syn in (self._synonyms(word) if word else ())
                if syn.lower() != word.lower()
            )
            self._cache[token] = found
        return found

    def _replaceable(self, tokens: Tokens) -> list[int]:
        """Positions of ``tokens`` that have synonyms (the last answer is kept: draws repeat it)."""
        key = tuple(tokens)
        if self._last[0] != key:
            self._last = (key, [i for i, token in enumerate(tokens) if self.token_synonyms(token)])
        return self._last[1]

    # The operators: each returns a new token list, or None when it cannot act on ``tokens``.
    def replace(self, tokens: Tokens, n: int, rng: random.Random) -> Tokens | None:
        """SR: ``min(n, replaceable)`` distinct positions, each replaced by one of its synonyms."""
        positions = self._replaceable(tokens)
        if not positions or n < 1:
            return None
        out = list(tokens)
        for i in rng.sample(positions, min(n, len(positions))):
            out[i] = rng.choice(self.token_synonyms(tokens[i]))
        return out

    def swap(self, tokens: Tokens, n: int, rng: random.Random) -> Tokens | None:
        """RS: ``n`` swaps, each of a random position ``i`` with a position drawn uniformly among
        those holding another token than ``i``'s (by rejection, or from a kept list of the other
        positions when ``i``'s token fills more than half the text: linear in the text)."""
        counts = Counter(tokens)
        if len(counts) < 2 or n < 1:
            return None
        out = list(tokens)
        size = len(out)
        top, top_count = counts.most_common(1)[0]
        others: list[int] = []
        where: dict[int, int] = {}  # position -> its place in ``others``
        if 2 * top_count > size:
            others = [k for k, token in enumerate(out) if token != top]
            where = {k: place for place, k in enumerate(others)}
        for _ in range(n):
            i = rng.randrange(size)
            if others and out[i] == top:
                place = rng.randrange(len(others))
                j = others[place]
                others[place] = i  # i now holds j's token, j holds ``top``
                where[i] = place
                del where[j]
            else:
                j = rng.randrange(size)
                while out[j] == out[i]:
                    j = rng.randrange(size)
                if others and out[j] == top:
                    place = where.pop(i)
                    others[place] = j
                    where[j] = place
            out[i], out[j] = out[j], out[i]
        return out

    def insert(self, tokens: Tokens, n: int, rng: random.Random) -> Tokens | None:
        """RI: ``n`` times, a synonym of a random word (bare, no punctuation) at a random position."""
        positions = self._replaceable(tokens)
        if not positions or n < 1:
            return None
        out = list(tokens)
        for _ in range(n):
            word = split_affixes(tokens[rng.choice(positions)])[1]
            out.insert(rng.randint(0, len(out)), rng.choice(self._synonyms(word)))
        return out

    def delete(self, tokens: Tokens, n: int, rng: random.Random) -> Tokens | None:
        """RD: ``min(n, L - 1)`` distinct positions deleted."""
        if len(tokens) < 2 or n < 1:
            return None
        gone = set(rng.sample(range(len(tokens)), min(n, len(tokens) - 1)))
        return [token for i, token in enumerate(tokens) if i not in gone]

    def mix(self, tokens: Tokens, rng: random.Random) -> Tokens | None:
        """RM: different operators among those that can act on ``tokens``, one edit each: two, or
        with ``mix=(least, most)`` a number drawn uniformly in that range (at most those that can act)."""
        able = [op for op in ("SR", "RS", "RI", "RD") if self.rates[op] > 0 and self._can(op, tokens)]
        least, most = self.mix_range
        if len(able) < least:
            return None
        count = least if least == most else rng.randint(least, min(most, len(able)))
        out: Tokens | None = tokens
        for op in rng.sample(able, count):
            out = self._apply(op, out, 1, rng) if out is not None else None
        return out

    def _can(self, op: str, tokens: Tokens) -> bool:
        if op in ("SR", "RI"):
            return bool(self._replaceable(tokens))
        return len(set(tokens) if op == "RS" else tokens) >= 2

    def _apply(self, op: str, tokens: Tokens, n: int, rng: random.Random) -> Tokens | None:
        operator = {"SR": self.replace, "RS": self.swap, "RI": self.insert, "RD": self.delete}[op]
        return operator(tokens, n, rng)

    def _stream(
        self, op: str, text: str, tokens: Tokens, n: int, draws: int
    ) -> Iterator[tuple[str, str, Tokens]]:
        """Distinct outputs of ``op`` over ``draws`` tries, in the order drawn, each with its
        :func:`normalize` key and its tokens; never ``text``."""
        rng = random.Random(f"{self.seed}\x1f{op}\x1f{text}")
        seen = {normalize(text), normalize(self.tokenizer.join(tokens))}  # (zh: the input without spaces)
        for _ in range(draws):
            out = self.mix(tokens, rng) if op == "RM" else self._apply(op, tokens, n, rng)
            if out is None and op == "RM":  # a draw of random operators: the next may act
                continue
            if out is None:
                return
            candidate = self.tokenizer.join(out)
            key = normalize(candidate)
            if key not in seen:
                seen.add(key)
                yield candidate, key, out

    def _streams(self, text: str, draws: int | None) -> dict[str, Iterator[tuple[str, str, Tokens]]]:
        tokens = self.tokenizer.split(text)
        counts = {**edit_counts(len(tokens), self.rates), "RM": 1}
        streams = {}
        for op in OPERATORS:
            edits = counts[op]
            if edits > 0:
                tries = draws or (paper_draws(op, edits) if self.draws == PAPER_DRAWS else int(self.draws))
                streams[op] = self._stream(op, text, tokens, edits, tries)
        return streams

    def pool(self, text: str, *, draws: int | None = None) -> dict[str, list[str]]:
        """Per operator that can act, its distinct outputs (never ``text``) over ``draws`` tries."""
        pools = {op: [c for c, _, _ in stream] for op, stream in self._streams(text, draws).items()}
        return {op: outputs for op, outputs in pools.items() if outputs}

    def augment(
        self, text: str, n: int, *, lm: NgramLM | None = None, quota: dict[str, int] | None = None
    ) -> list[str]:
        """Up to ``n`` distinct outputs for ``text``: REDA, or REDA+NG when ``lm`` is given.

        Operators are visited in a random order (seeded by the text), one output each per round;
        with ``quota`` (outputs per operator, e.g. :func:`paper_recipe`) each operator in turn
        gives up to its quota instead. REDA takes each operator's outputs in the order drawn;
        REDA+NG ranks each operator's whole pool by ``lm.logprob``, best first (the LM must cut
        texts as this REDA does: a ValueError otherwise).
        """
        n = check_number(n, "n", kind=int, low=0)
        if lm is not None and lm.tokenizer.lm_name != self.tokenizer.lm_name:
            raise ValueError(
                f"the n-gram LM tokenizes with {lm.tokenizer.lm_name}, REDA with {self.tokenizer.lm_name}: "
                "train the LM with REDA's tokenizer"
            )
        streams = self._streams(text, None)
        order = sorted(streams)
        random.Random(f"{self.seed}\x1forder\x1f{text}").shuffle(order)
        if lm is not None:  # scored by the edit's own tokens (English: the key's words), never cut again
            lm_tokens = self.tokenizer.lm_tokens_of
            for op, stream in streams.items():
                streams[op] = iter(sorted(stream, key=lambda item: -lm.logprob(lm_tokens(item[2], item[1]))))
        queues = {op: streams[op] for op in order}
        chosen: list[str] = []
        seen = {normalize(text)}

        def take(op: str) -> bool:
            """Choose the next output of ``op`` not chosen yet; False when it has no more."""
            for candidate, key, _ in queues[op]:
                if key not in seen:
                    seen.add(key)
                    chosen.append(candidate)
                    return True
            return False

        if quota is not None:
            for op in (op for op in OPERATORS if op in queues):
                for _ in range(quota.get(op, 0)):
                    if len(chosen) >= n or not take(op):
                        break
            return chosen
        while queues and len(chosen) < n:
            for op in list(queues):
                if not take(op):
                    del queues[op]
                if len(chosen) == n:
                    break
        return chosen
