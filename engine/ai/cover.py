"""The defender's cover plan: the cheapest cover of every uncovered card (C9, S9)."""

from __future__ import annotations

from engine.cards import Card

Plan = tuple[float, list[tuple[Card, Card]]]


def cover_plan(
    attacks: list[Card],
    hand: list[Card],
    beat: tuple[int, ...],
    values: tuple[float, ...],
) -> Plan | None:
    """The cheapest way to cover every card of ``attacks`` with distinct cards of
    ``hand`` (a multiset): ``(total value, [(attack, card)])`` in the order of
    ``attacks``, or ``None`` if some card cannot be covered.

    An assignment problem, solved exactly in polynomial time (#38): the Hungarian
    method on the attacks and, per attack, its ``len(attacks)`` cheapest beaters
    (an optimal plan never needs another: it could be swapped for an unused
    cheaper one).  O(k² m) for k attacks and m candidate cards, so a 10-card
    Shchelkovsky bout costs a few hundred steps, where the former exact search
    grew about factorially (seconds on the event loop).  Ties between plans of
    the same total are broken as that search broke them (see
    :func:`cover_plan_steps`), so decisions are unchanged and deterministic."""
    return cover_plan_steps(attacks, hand, beat, values)[0]


def cover_plan_steps(
    attacks: list[Card],
    hand: list[Card],
    beat: tuple[int, ...],
    values: tuple[float, ...],
) -> tuple[Plan | None, int]:
    """:func:`cover_plan` and its work: how many (attack, card) reduced costs the
    Hungarian method looked at -- at most ``k (k + 1) / 2 * m`` (each attack
    added grows the alternating tree by at most one card per round, a round scans
    the ``m`` candidate cards).

    The tie-break: attacks with fewer candidate beaters first (a stable sort),
    each candidate list cheapest first (value, then card); among the cheapest
    plans, the one whose vector of candidate positions, in that attack order, is
    lexicographically smallest -- the first cheapest plan a depth-first search in
    that order meets.  It is folded into exact integer costs (the values scaled
    to integers, times ``k**k``, plus the positions as base-``k`` digits), so the
    optimum is unique and the method finds it whatever its own order."""
    k = len(attacks)
    if k == 0:
        return (0.0, []), 0
    if k > len(hand):
        return None, 0
    order = sorted(range(len(hand)), key=lambda i: (values[hand[i]], hand[i]))
    options: list[list[int]] = []
    for a in attacks:
        bm = beat[a]
        opts = [i for i in order if bm >> hand[i] & 1][:k]
        if not opts:
            return None, 0
        options.append(opts)
    rows = sorted(range(k), key=lambda j: len(options[j]))  # the tie-break's order
    heads = [opts[0] for opts in options]
    if len(set(heads)) == k:
        # the common case: the attacks' cheapest beaters are distinct cards, the
        # cheapest plan there is, and the first in the tie-break's order
        return _plan(attacks, hand, values, rows, heads), 0
    # the candidate cards (hand indices) as columns 1..m
    column: dict[int, int] = {}
    for opts in options:
        for i in opts:
            column.setdefault(i, len(column) + 1)
    m = len(column)
    if m < k:
        return None, 0  # Hall: fewer candidate cards than cards to cover
    # exact integer costs: a float's denominator is a power of two, the largest
    # one is a common denominator
    ratios = {i: values[hand[i]].as_integer_ratio() for i in column}
    den = max(d for _, d in ratios.values())
    scaled = {i: n * (den // d) for i, (n, d) in ratios.items()}
    big = k**k  # above any tie-break term: sum(pos * k**(k-1-d)) < k**k
    inf = float("inf")
    cost: list[list[float]] = [[]]  # cost[row][column]; rows 1..k, in tie-break order
    for d, j in enumerate(rows):
        digit = k ** (k - 1 - d)
        line: list[float] = [inf] * (m + 1)
        for p, i in enumerate(options[j]):
            line[column[i]] = scaled[i] * big + p * digit
        cost.append(line)
    owner, steps = _hungarian(cost, k, m)
    if owner is None:
        return None, steps
    by_column = [0, *column]  # column -> hand index
    chosen = [0] * k  # per attack (original order): the hand index
    for col in range(1, m + 1):
        if owner[col]:
            chosen[rows[owner[col] - 1]] = by_column[col]
    return _plan(attacks, hand, values, rows, chosen), steps


def _plan(
    attacks: list[Card],
    hand: list[Card],
    values: tuple[float, ...],
    rows: list[int],
    chosen: list[int],
) -> Plan:
    """The plan covering ``attacks[j]`` with ``hand[chosen[j]]``; its total summed
    in the tie-break's order, as the former search summed it."""
    total = 0.0
    for j in rows:
        total += values[hand[chosen[j]]]
    return total, [(a, hand[i]) for a, i in zip(attacks, chosen, strict=True)]


def _hungarian(cost: list[list[float]], n: int, m: int) -> tuple[list[int] | None, int]:
    """A minimum-cost assignment of rows ``1..n`` to distinct columns ``1..m``
    (``n <= m``) along the finite entries of ``cost[row][column]`` (integers; inf:
    that column cannot take that row):
    per column its row (0: none), or None when no assignment covers every row;
    and the number of reduced costs looked at.  The Hungarian method with
    potentials, one row added at a time along a shortest augmenting path."""
    u = [0] * (n + 1)  # row potentials
    v = [0] * (m + 1)  # column potentials
    owner = [0] * (m + 1)  # owner[0]: the row being added
    way = [0] * (m + 1)  # the previous column on the shortest path
    steps = 0
    inf = float("inf")
    for row in range(1, n + 1):
        owner[0] = row
        j0 = 0
        minv: list[float] = [inf] * (m + 1)
        used = [False] * (m + 1)
        while True:
            used[j0] = True
            i0 = owner[j0]
            line = cost[i0]
            ui = u[i0]
            delta = inf
            j1 = 0
            for j in range(1, m + 1):
                if used[j]:
                    continue
                steps += 1
                cur = line[j] - ui - v[j]  # inf off the row's candidates
                if cur < minv[j]:
                    minv[j] = cur
                    way[j] = j0
                if minv[j] < delta:
                    delta = minv[j]
                    j1 = j
            if j1 == 0:
                return None, steps  # no column reachable: Hall's condition fails
            d = int(minv[j1])  # an int: the unreached columns alone are inf
            for j in range(m + 1):
                if used[j]:
                    u[owner[j]] += d
                    v[j] -= d
                else:
                    minv[j] -= d
            j0 = j1
            if owner[j0] == 0:
                break
        while j0:  # augment along the path
            j1 = way[j0]
            owner[j0] = owner[j1]
            j0 = j1
    return owner, steps


def reference_cover_plan(
    attacks: list[Card],
    hand: list[Card],
    beat: tuple[int, ...],
    values: tuple[float, ...],
    max_nodes: int | None = None,
) -> tuple[Plan | None, int]:
    """The exact search :func:`cover_plan` was until #38, and the number of nodes
    it visited: the reference of ``tests/engine/test_cover.py`` and
    ``bench/cover.py``, never used by the AI -- about factorial when the attacks
    share their cheapest beaters (10 cards: seconds).  Per attack its ``k``
    cheapest beaters, attacks with fewer options first, a branch cut when its
    cost plus the remaining attacks' cheapest options cannot beat the best plan;
    ``max_nodes``: stop there with the best plan so far (then not exact)."""
    k = len(attacks)
    if k == 0:
        return (0.0, []), 0
    if k > len(hand):
        return None, 0
    order = sorted(range(len(hand)), key=lambda i: (values[hand[i]], hand[i]))
    options: list[list[int]] = []
    for a in attacks:
        bm = beat[a]
        opts = [i for i in order if bm >> hand[i] & 1][:k]
        if not opts:
            return None, 0
        options.append(opts)
    if not _matchable(options, len(hand)):
        return None, 0  # Hall: some cards cannot all be covered at once
    idx = sorted(range(k), key=lambda j: len(options[j]))
    rest = [0.0] * (k + 1)
    for d in range(k - 1, -1, -1):
        rest[d] = rest[d + 1] + values[hand[options[idx[d]][0]]]
    best_cost = float("inf")
    best: list[int] = []
    used = [False] * len(hand)
    chosen = [0] * k
    budget_left = [max_nodes if max_nodes is not None else -1]
    nodes = [0]

    def dfs(d: int, cost: float) -> None:
        nonlocal best_cost, best
        if cost + rest[d] >= best_cost:
            return
        if budget_left[0] == 0 and best:
            return
        budget_left[0] -= 1
        nodes[0] += 1
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
        return None, nodes[0]
    return (best_cost, [(attacks[j], hand[best[j]]) for j in range(k)]), nodes[0]


def _matchable(options: list[list[int]], n: int) -> bool:
    """Can every attack get a distinct card of its options (Kuhn's augmenting
    paths)?"""
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
