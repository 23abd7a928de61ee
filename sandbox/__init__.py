"""Running the product locally, without Telegram or a Redis of one's own.

* :mod:`sandbox.fake_api` -- a fake Telegram Bot API server (simulated users,
  flood limits, a change feed); the tests, the benchmarks and the page use it;
* :mod:`sandbox.page` -- the sandbox: the real bot polling the fake, and a web
  page on loopback where simulated users play it;
* :mod:`sandbox.local_redis` -- an embedded throw-away (or persistent)
  ``redis-server`` on a free loopback port;
* :mod:`sandbox.launcher` -- the whole product on one machine (Redis, the admin
  API under gunicorn, the bot or the sandbox);
* :mod:`sandbox.standalone` -- the sandbox on its own (``durak sandbox``, ``python -m sandbox``).

The ``durak`` command itself is :mod:`durak.cli`, above this package.

Nothing in ``engine``, ``telegram_bot`` or ``admin_api`` imports this package.
"""
