"""Command line: ``python -m engine replay|legal FILE.json`` (RULES §3; ``replay``
also takes a game record, issue #16), ``python -m engine verify SEED COMMITMENT
--variant V --players N`` (docs/FAIRNESS.md) and
``python -m engine selfplay --variant V --players N --games G --seed S --ai K1,K2``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from engine.errors import EngineError


def _load(path: str) -> Any:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _dump(obj: Any) -> None:
    json.dump(obj, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")


def _option_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--decks", type=int, default=None, help="shchelkovsky: 2 or 4")
    p.add_argument(
        "--keep-jokers", action="store_true", help="shchelkovsky: do not remove one joker"
    )


def _options(args: argparse.Namespace) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if args.decks is not None:
        options["decks"] = args.decks
    if args.keep_jokers:
        options["remove_joker"] = False
    return options


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, text in (
        ("replay", "replay a scenario file; exit 0 if every action was legal, 1 otherwise"),
        ("legal", "print every seat's legal actions after the file's actions"),
    ):
        p = sub.add_parser(name, help=text)
        p.add_argument("file")
    vp = sub.add_parser("verify", help="recompute a game's commitment and deal from its seed")
    vp.add_argument("seed")
    vp.add_argument("commitment")
    vp.add_argument("--variant", required=True)
    vp.add_argument("--players", type=int, required=True)
    vp.add_argument(
        "--previous-loser", type=int, default=None, help="a rematch: the last game's loser (C5/S5)"
    )
    _option_args(vp)
    sp = sub.add_parser("selfplay", help="AI players against each other; prints one JSON object")
    sp.add_argument("--variant", required=True)
    sp.add_argument("--players", type=int, required=True)
    sp.add_argument("--games", type=int, default=100)
    sp.add_argument("--seed", type=int, default=0)
    sp.add_argument("--ai", default="random", help="comma-separated kinds, cycled over the seats")
    _option_args(sp)
    args = parser.parse_args(argv)

    from engine import scenario, verify

    try:
        if args.command in ("replay", "legal"):
            data = _load(args.file)
            if args.command == "legal":
                result = scenario.legal(data)
            elif isinstance(data, dict) and data.get("format") == verify.RECORD_FORMAT:
                result = verify.replay_record(data)
            else:
                result = scenario.replay(data)[0]
            _dump(result)
            return 0 if result["ok"] else 1
        options = _options(args)
        if args.command == "verify":
            if not args.seed.lstrip("-").isdigit():  # exit 2, as documented (#29)
                raise ValueError(f"the seed is a whole number, not {args.seed!r}")
            seed = int(args.seed)
            checked = verify.verify(
                seed, args.commitment, args.variant, args.players, options, args.previous_loser
            )
            _dump(checked)
            return 0 if checked["ok"] else 1
        from engine.selfplay import selfplay

        kinds = [k.strip() for k in args.ai.split(",") if k.strip()]
        _dump(selfplay(args.variant, args.players, args.games, args.seed, kinds, options))
        return 0
    except (OSError, json.JSONDecodeError) as e:
        print(f"error: cannot read {getattr(args, 'file', '')}: {e}", file=sys.stderr)
        return 2
    except EngineError as e:
        print(f"error: {e.code}: {e.message}", file=sys.stderr)
        return 2
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
