"""The defender's cover plan: the cheapest cover of every uncovered card (C9, S9)."""

from __future__ import annotations

from engine.cards import Card


def cover_plan(
    attacks: list[Card], hand: list[Card], beat: tuple[int, ...], values: tuple[float, ...]
) -> tuple[float, list[tuple[Card, Card]]] | None:
    """The cheapest way to cover every card of ``attacks`` with distinct cards of
    ``hand`` (a multiset, lowest value first): ``(total value, [(attack, card)])``,
    or ``None`` if some card cannot be covered.  A small exact assignment search:
    per attack card only its ``len(attacks)`` cheapest beaters can be in an optimal
    plan (any other could be swapped for an unused cheaper one)."""
    k = len(attacks)
    if k == 0:
        return 0.0, []
    if k > len(hand):
        return None
    order = sorted(range(len(hand)), key=lambda i: (values[hand[i]], hand[i]))
    options: list[list[int]] = []
    for a in attacks:
        bm = beat[a]
        opts = [i for i in order if bm >> hand[i] & 1][:k]
        if not opts:
            return None
        options.append(opts)
    idx = sorted(range(k), key=lambda j: len(options[j]))
    best_cost = float("inf")
    best: list[int] = []
    used = [False] * len(hand)
    chosen = [0] * k

    def dfs(d: int, cost: float) -> None:
        nonlocal best_cost, best
        if cost >= best_cost:
            return
        if d == k:
            best_cost = cost
            best = chosen[:]
            return
        j = idx[d]
        for i in options[j]:
            if not used[i]:
                used[i] = True
                chosen[j] = i
                dfs(d + 1, cost + values[hand[i]])
                used[i] = False

    dfs(0, 0.0)
    if not best:
        return None
    return best_cost, [(attacks[j], hand[best[j]]) for j in range(k)]
