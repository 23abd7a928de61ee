"""The defender's cover plan: the cheapest cover of every uncovered card (C9, S9)."""

from __future__ import annotations

from engine.cards import Card


def cover_plan(
    attacks: list[Card],
    hand: list[Card],
    beat: tuple[int, ...],
    values: tuple[float, ...],
    max_nodes: int | None = None,
) -> tuple[float, list[tuple[Card, Card]]] | None:
    """The cheapest way to cover every card of ``attacks`` with distinct cards of
    ``hand`` (a multiset, lowest value first): ``(total value, [(attack, card)])``,
    or ``None`` if some card cannot be covered.  A small exact assignment search:
    per attack card only its ``len(attacks)`` cheapest beaters can be in an optimal
    plan (any other could be swapped for an unused cheaper one).  ``max_nodes``:
    stop after that many search nodes with the best plan found so far (the
    playouts' bound on time; the result is exact when the bound is not reached)."""
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
    if not _matchable(options, len(hand)):
        return None  # Hall: some cards cannot all be covered at once
    idx = sorted(range(k), key=lambda j: len(options[j]))
    # a lower bound of what the attacks from depth d on cost (their cheapest
    # options): a branch that cannot beat the best plan found is cut, so the
    # search returns the plan it always returned, without the blow-up
    rest = [0.0] * (k + 1)
    for d in range(k - 1, -1, -1):
        rest[d] = rest[d + 1] + values[hand[options[idx[d]][0]]]
    best_cost = float("inf")
    best: list[int] = []
    used = [False] * len(hand)
    chosen = [0] * k
    budget = [max_nodes if max_nodes is not None else -1]

    def dfs(d: int, cost: float) -> None:
        nonlocal best_cost, best
        if cost + rest[d] >= best_cost:
            return
        if budget[0] == 0 and best:
            return  # out of nodes: the best plan so far
        budget[0] -= 1
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


def _matchable(options: list[list[int]], n: int) -> bool:
    """Can every attack get a distinct card of its options (a perfect matching of
    the attacks, Kuhn's augmenting paths)?"""
    owner = [-1] * n

    def augment(j: int, seen: list[bool]) -> bool:
        for i in options[j]:
            if not seen[i]:
                seen[i] = True
                if owner[i] < 0 or augment(owner[i], seen):
                    owner[i] = j
                    return True
        return False

    return all(augment(j, [False] * n) for j in range(len(options)))
