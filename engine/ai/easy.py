"""The easy AI: the heuristic player with human-like mistakes.

A beginner knows the rules but slips: now and then he plays any legal move
(a card he should have kept, a take he did not need, a pass with cards to
throw in), and he does not always remember who took which cards.  So:

* with probability :attr:`EasyPlayer.mistake` a decision is a uniformly random
  legal action (:meth:`~engine.state.GameState.sample_action`);
* otherwise, with probability :attr:`EasyPlayer.forget`, the cards seen when
  other seats took them are forgotten for this decision (the player plays as if
  it had not watched), then the heuristic decides.

Deterministic per seed: every draw comes from the player's seeded RNG.  Like the
heuristic it reads public information only (:class:`PublicInfo`).
"""

from __future__ import annotations

from engine.actions import Action
from engine.ai.heuristic import HeuristicPlayer
from engine.ai.public_info import PublicInfo
from engine.state import GameState


class EasyPlayer(HeuristicPlayer):
    """:class:`HeuristicPlayer` that slips (see the module)."""

    name = "easy"
    mistake = 0.2
    """Share of decisions played at random."""
    forget = 0.5
    """Share of the other decisions made without the memory of taken cards."""

    def choose(self, state: GameState, seat: int) -> Action | None:
        if state.over or seat not in state.to_act():
            return None
        if self.rng.random() < self.mistake:
            return state.sample_action(seat, self.rng.random())
        if self.rng.random() < self.forget:
            info = self._info.get(seat)
            if info is None:
                info = self._info[seat] = PublicInfo(seat)
            info.update(state)
            info.known.clear()  # the heuristic's update() recounts the unseen cards
        return super().choose(state, seat)
