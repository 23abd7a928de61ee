"""Play the real bot without Telegram: a fake Bot API, the bot on it, a web page.

    python -m sandbox          # prints one local URL; open it

or from code (the product's run command does this when ``BOT_TOKEN`` is unset)::

    await run_sandbox(redis_url=url, on_ready=print)   # until cancelled

The page shows several simulated users side by side, each with his chat with
the bot and the groups he is in, and lets them type, press buttons, follow deep
links, share invitations by inline mode and switch their language.
"""

from sandbox.page.server import (
    DEFAULT_USERS,
    Sandbox,
    SimPerson,
    describe_limits,
    run_sandbox,
    sandbox_limits,
)

__all__ = [
    "DEFAULT_USERS",
    "Sandbox",
    "SimPerson",
    "describe_limits",
    "run_sandbox",
    "sandbox_limits",
]
