"""All-foci re-rooting by graph size: ``paraamr.amr.variants`` vs. the naive penman loop.

The naive loop is what amrlib's paraphrasing example does: ``penman.decode`` the graph, then
``penman.encode(g, top=v)`` for each focus. Both sides do exactly the same work: every variable
but the current top (``variants(..., exclude=())``), one PENMAN text each. Outputs are checked in
the same run: for every graph and focus, each side's text must decode (penman) to the source's
triples with the focus as top (ours always; penman's encoder sometimes writes a node before its concept, which
decodes to an extra instance-less triple: counted apart); byte-identical texts are counted too.

Graphs are generated AMR-like (``tests/support/amr_graphs.py``: one re-entrancy and one attribute
per 8 variables, local re-entrancies) at 10, 25, 50, 100 and 200 variables; the cost of
all-foci re-rooting grows with the square of the size, so the ratio depends on it. Timing
(``benchmarks/_timing.py``): one thread, a warm-up on other graphs, both sides interleaved
(order rotated each round), best and median of ``--rounds``, CPU time next to wall time, load
average before and after.

    python benchmarks/bench_refocus.py [--rounds 3] [--scale 1.0] [--sizes 10,25,50,100,200]
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

from _timing import interleave, load, machine, pin_threads

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))

#: Graphs per size at ``--scale 1``: about the same naive time per size on one core.
GRAPHS = {10: 300, 25: 100, 50: 30, 100: 8, 200: 3}


def corpus(nodes: int, count: int, seed: int, *, local: bool = True) -> list[str]:
    """``count`` PENMAN graphs of ``nodes`` variables, one re-entrancy and one attribute per 8."""
    from amr_graphs import random_penman

    rng = random.Random(f"{seed}|{nodes}")
    return [
        random_penman(rng, nodes, reentrancies=nodes // 8, attributes=nodes // 8, local=local)
        for _ in range(count)
    ]


def naive(texts: list[str]) -> list[dict[str, str]]:
    """amrlib's example loop, on the same foci as ours: every variable but the top."""
    import penman
    from penman.models.amr import model

    out = []
    for text in texts:
        graph = penman.decode(text, model=model)
        graph.metadata = {}
        out.append(
            {var: penman.encode(graph, top=var, model=model) for var in graph.variables() if var != graph.top}
        )
    return out


def ours(texts: list[str]) -> list[dict[str, str]]:
    from paraamr import amr

    return [{v.focus: v.penman for v in amr.variants(text, exclude=())} for text in texts]


def compare(texts: list[str], outputs: list[dict[str, str]]) -> tuple[int, int, int]:
    """(outputs, decoding to the source's triples with the focus as top, the same after dropping
    ``(v, :instance, None)``): penman's encoder sometimes writes a node's first mention without
    its concept and defines it later (``(z4 :ARG0 ...`` ... ``(z4 / name)``), which penman then
    reads as an extra instance-less triple)."""
    import penman
    from penman.models.amr import model

    total = exact = modulo = 0
    for text, out in zip(texts, outputs, strict=True):
        source = penman.decode(text, model=model)
        want = set(source.triples)
        if set(out) != set(source.variables()) - {source.top}:
            raise SystemExit(
                f"{source.metadata.get('id')}: foci {sorted(out)} are not every variable but the top"
            )
        for focus, penman_text in out.items():
            graph = penman.decode(penman_text, model=model)
            got = set(graph.triples)
            total += 1
            exact += graph.top == focus and got == want
            modulo += (
                graph.top == focus and {t for t in got if t[2] is not None or t[1] != ":instance"} == want
            )
    return total, exact, modulo


def identical(a: list[dict[str, str]], b: list[dict[str, str]]) -> int:
    """How many outputs are byte-identical on both sides, metadata lines aside."""

    def body(text: str) -> str:
        return "\n".join(line for line in text.splitlines() if not line.startswith("#"))

    return sum(body(x[f]) == body(y[f]) for x, y in zip(a, b, strict=True) for f in x)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--scale", type=float, default=1.0, help="multiply the graph counts (default 1)")
    parser.add_argument("--sizes", default="10,25,50,100,200", help="variables per graph")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--long-range", action="store_true", help="re-entrancies between random nodes")
    args = parser.parse_args(argv)
    threads = pin_threads(1)
    print(machine(threads))
    print(
        f"{'nodes':>5}{'graphs':>7}{'variants':>9}{'naive ms/graph':>16}{'ours ms/graph':>15}"
        f"{'ratio best (median)':>24}{'CPU ratio':>10}  source graph kept: ours  naive  identical text"
    )
    for nodes in (int(s) for s in args.sizes.split(",")):
        count = max(1, round(GRAPHS.get(nodes, 3) * args.scale))
        texts = corpus(nodes, count, args.seed, local=not args.long_range)
        warm = corpus(nodes, max(1, count // 10), args.seed + 1)
        times, outputs = interleave(
            {"naive": lambda t=texts: naive(t), "ours": lambda t=texts: ours(t)},
            rounds=args.rounds,
            warmup={"naive": lambda w=warm: naive(w), "ours": lambda w=warm: ours(w)},
        )
        total, exact, _ = compare(texts, outputs["ours"])
        naive_total, naive_exact, naive_modulo = compare(texts, outputs["naive"])
        same = identical(outputs["ours"], outputs["naive"])
        n, o = times["naive"], times["ours"]
        print(
            f"{nodes:>5}{count:>7}{total:>9}{n.best / count * 1e3:>16.2f}{o.best / count * 1e3:>15.2f}"
            f"{n.ratio(o):>24}{n.cpu_best / o.cpu_best:>9.2f}x  {exact}/{total}  {naive_exact}/{naive_total} "
            f"({naive_modulo} without instance-less triples)  {same}",
            flush=True,
        )
        if exact != total or naive_total != total:
            print(f"  OURS DIFFER from the source graph at {nodes} variables: {total - exact} of {total}")
    print(f"after: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
